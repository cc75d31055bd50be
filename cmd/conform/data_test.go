package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/rest"
)

// TestRepairNamesWhatItDroppedAndDataExportWritesIt: with a byte flipped in the middle of
// the log, `conform serve --data --repair` serves what comes before the damage, names what
// it dropped (the count, the table, keys) and the command that exports it, and `conform
// data export` writes the intact acknowledged inserts after the damage as JSON lines of
// the table: served and exported together hold every insert but the damaged one.
func TestRepairNamesWhatItDroppedAndDataExportWritesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs conform serve")
	}
	dir := t.TempDir()
	srv := startServeProcess(t, "--data", dir)
	b, err := rest.New(srv.conn, rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTable(c, "salvaged"); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		if _, err := b.InsertEntity(c, "salvaged", api.NewEntity("p", fmt.Sprintf("%03d", i), map[string]api.Value{"n": api.Int64(int64(i))})); err != nil {
			t.Fatal(err)
		}
	}
	srv.stop(t, syscall.SIGKILL)
	wal := filepath.Join(dir, "wal-0")
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x5a
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}

	repaired := startServeProcess(t, "--data", dir, "--repair")
	b2, _ := rest.New(repaired.conn, rest.WithTimeout(10*time.Second))
	page, err := b2.QueryEntities(c, "salvaged", api.Query{})
	repaired.stop(t, os.Interrupt)
	if err != nil {
		t.Fatal(err)
	}
	said := repaired.out.String()
	aside, _ := filepath.Glob(filepath.Join(dir, "damaged-*"))
	if len(aside) != 1 {
		t.Fatalf("set aside: %v", aside)
	}
	if !strings.Contains(said, "dropped: ") || !strings.Contains(said, "salvaged (") || !strings.Contains(said, "conform data export "+aside[0]) {
		t.Errorf("the repair does not name what it dropped and how to export it:\n%s", said)
	}

	out := filepath.Join(t.TempDir(), "export")
	exported, err := runBounded(exec.Command(conformBin, "data", "export", aside[0], out), 30*time.Second)
	if err != nil {
		t.Fatalf("conform data export: %v\n%s", err, exported)
	}
	f, err := os.Open(filepath.Join(out, "salvaged.jsonl"))
	if err != nil {
		t.Fatalf("%v\n%s", err, exported)
	}
	defer f.Close()
	have := map[string]bool{}
	for _, e := range page.Entities {
		have[e.RowKey] = true
	}
	served := len(have)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Op     string `json:"op"`
			Entity struct {
				RowKey string `json:"RowKey"`
				N      string `json:"n"`
				NType  string `json:"n@odata.type"`
			} `json:"entity"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("an exported line is not JSON: %v: %s", err, sc.Bytes())
		}
		if line.Op != "put" || line.Entity.NType != "Edm.Int64" {
			t.Errorf("an exported line: %s", sc.Bytes())
		}
		if have[line.Entity.RowKey] {
			t.Errorf("%s is both served and exported", line.Entity.RowKey)
		}
		have[line.Entity.RowKey] = true
	}
	if served == n || len(have) < n-1 {
		t.Errorf("served %d, served or exported %d of %d inserts; want every one but the damaged", served, len(have), n)
	}
	if again, err := runBounded(exec.Command(conformBin, "data", "export", aside[0], out), 30*time.Second); err == nil || !strings.Contains(again, "already exists") {
		t.Errorf("an export over an earlier one: %v\n%s", err, again)
	}
}

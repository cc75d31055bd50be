package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
)

// keptSettingsDir is a data directory whose settings.json holds the ACL "round14" (permission
// r, start 2020) of table t1, which its backend holds.
func keptSettingsDir(t *testing.T) (string, *reference.Service) {
	t.Helper()
	dir := t.TempDir()
	b := reference.New()
	if err := b.CreateTable(context.Background(), "tbl1"); err != nil {
		t.Fatal(err)
	}
	s := tableserver.Settings{ACLs: map[string][]tableserver.SignedIdentifier{"tbl1": {{ID: "round14", Permission: "r",
		Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Expiry: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)}}}}
	if err := (settingsKeeper{dir: dir}).SaveSettings("", s); err != nil {
		t.Fatal(err)
	}
	return dir, b
}

// TestSettingsAreChecksummed: a flipped bit in settings.json (the ACL id "round14" read as
// "sound14", a permission r as s, a start year 2020 as 2030) and a file replaced by null or
// {} are refused with the file named, never loaded as written; --repair sets the file aside
// and starts the account without settings, saying so.
func TestSettingsAreChecksummed(t *testing.T) {
	dir, b := keptSettingsDir(t)
	got, err := loadSettings(dir, b, true, false, func(string) { t.Error("a warning for intact settings") })
	if err != nil || len(got.ACLs["tbl1"]) != 1 || got.ACLs["tbl1"][0].ID != "round14" {
		t.Fatalf("intact settings: %+v, %v", got, err)
	}
	path := filepath.Join(dir, settingsFile)
	intact, _ := os.ReadFile(path)
	damages := map[string][]byte{
		"an id's bit flipped":         bytes.Replace(intact, []byte("round14"), []byte("sound14"), 1),
		"a permission's bit flipped":  bytes.Replace(intact, []byte(`"r"`), []byte(`"s"`), 1),
		"a start year's bit flipped":  bytes.Replace(intact, []byte("2020"), []byte("2030"), 1),
		"null":                        []byte("null"),
		"an empty object":             []byte("{}"),
		"not JSON":                    []byte("{\"crc32c\":"),
		"settings without a checksum": []byte(`{"acls":{"tbl1":[{"ID":"round14"}]}}`),
	}
	for what, data := range damages {
		if bytes.Equal(data, intact) {
			t.Fatalf("%s: the damage changed nothing", what)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := loadSettings(dir, b, true, false, func(string) {}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--repair") {
			t.Errorf("%s: loaded %+v (%v); want a refusal naming %s and --repair", what, s, err, path)
		}
		var warned []string
		s, err := loadSettings(dir, b, true, true, func(line string) { warned = append(warned, line) })
		if err != nil || len(s.ACLs) != 0 || len(warned) != 1 || !strings.Contains(warned[0], "damaged") {
			t.Errorf("%s with --repair: %+v, %v, warnings %q; want no settings and one line", what, s, err, warned)
		}
		if aside, _ := filepath.Glob(path + ".damaged-*"); len(aside) == 0 {
			t.Errorf("%s with --repair: the damaged file was not kept", what)
		}
		if _, err := loadSettings(dir, b, true, false, func(string) {}); err != nil {
			t.Errorf("%s: after the repair the rewritten settings are refused: %v", what, err)
		}
	}
}

// TestMissingSettingsAreRefusedWhereKept: settings.json deleted from an account the data
// directory says keeps its settings is refused with the file named (the account would start
// with every ACL and CORS rule gone); --repair starts it without them, saying so. Where the
// directory says nothing (a new one, or one an older conform wrote), a missing file is no
// settings, and one without a checksum is read as written and then kept with one.
func TestMissingSettingsAreRefusedWhereKept(t *testing.T) {
	dir, b := keptSettingsDir(t)
	path := filepath.Join(dir, settingsFile)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSettings(dir, b, true, false, func(string) {}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing settings.json where kept: %v; want a refusal naming %s", err, path)
	}
	var warned []string
	if s, err := loadSettings(dir, b, true, true, func(line string) { warned = append(warned, line) }); err != nil || len(s.ACLs) != 0 || len(warned) != 1 {
		t.Errorf("a missing settings.json with --repair: %+v, %v, %q", s, err, warned)
	}

	older := t.TempDir()
	if err := os.WriteFile(filepath.Join(older, settingsFile), []byte(`{"acls":{"tbl1":[{"ID":"round14","Permission":"r"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := loadSettings(older, b, false, false, func(string) { t.Error("a warning for an older directory") })
	if err != nil || len(s.ACLs["tbl1"]) != 1 {
		t.Fatalf("settings an older conform wrote: %+v, %v", s, err)
	}
	if s, err := loadSettings(older, b, true, false, func(string) {}); err != nil || len(s.ACLs["tbl1"]) != 1 {
		t.Errorf("settings an older conform wrote are not kept with a checksum after a start: %+v, %v", s, err)
	}
}

// TestServeRefusesAMissingAccountDirectoryOrSettings: `conform serve --data` refuses to start
// an account whose accounts/<name>/ folder is gone, or whose settings.json is gone, where
// data.json says it kept them, naming what is missing; with --repair it starts.
func TestServeRefusesAMissingAccountDirectoryOrSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs conform serve")
	}
	dir := t.TempDir()
	args := []string{"--data", dir, "--account", "second:c2Vjb25kIGFjY291bnQncyBrZXkgZm9yIHRoZSB0ZXN0"}
	startServeProcess(t, args...).stop(t, os.Interrupt)
	if _, err := os.Stat(filepath.Join(dir, dataManifestFile)); err != nil {
		t.Fatalf("no %s after a start: %v", dataManifestFile, err)
	}
	refused := func(what, missing string) {
		t.Helper()
		out, err := runBounded(exec.Command(conformBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...), 30*time.Second)
		if err == nil || !strings.Contains(out, missing) || !strings.Contains(out, "--repair") {
			t.Errorf("%s: conform serve answered %v:\n%s\nwant a refusal naming %s", what, err, out, missing)
		}
	}
	account := filepath.Join(dir, "accounts", "second")
	if err := os.RemoveAll(account); err != nil {
		t.Fatal(err)
	}
	refused("accounts/second removed", account)
	repaired := startServeProcess(t, append(args, "--repair")...)
	repaired.stop(t, os.Interrupt)
	if !strings.Contains(repaired.out.String(), account) {
		t.Errorf("the repair does not name the missing folder:\n%s", repaired.out)
	}

	if err := os.Remove(filepath.Join(dir, settingsFile)); err != nil {
		t.Fatal(err)
	}
	refused("settings.json removed", filepath.Join(dir, settingsFile))
}

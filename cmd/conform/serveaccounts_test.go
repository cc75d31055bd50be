package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// serveLines starts conform serve with args and returns the connection strings it prints
// before it serves, stopping it afterwards.
func serveLines(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(conformBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var conns []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return conns
			}
			if strings.HasPrefix(l, "DefaultEndpointsProtocol=") {
				conns = append(conns, l)
			}
		case <-time.After(2 * time.Second):
			if len(conns) > 0 {
				go func() {
					for range lines {
					}
				}()
				return conns
			}
		case <-timeout:
			t.Fatal("conform serve printed no connection string")
		}
	}
}

// Issue 34 item 12: serve prints the connection string of every account; a key given on
// the command line as it was given, one read from a variable or a file by where it came
// from, never the key itself.
func TestServePrintsEveryAccountsConnectionString(t *testing.T) {
	given := base64.StdEncoding.EncodeToString([]byte("the key given on the command line"))
	fromEnv := base64.StdEncoding.EncodeToString([]byte("the key read from a variable!!!!"))
	fromFile := base64.StdEncoding.EncodeToString([]byte("the key read from a file!!!!!!!!"))
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(fromFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conns := serveLines(t, []string{"CONFORM_TEST_ACCOUNT_KEY=" + fromEnv},
		"--account", "given:"+given, "--account", "fromenv:env:CONFORM_TEST_ACCOUNT_KEY", "--account", "fromfile:file:"+keyFile)
	all := strings.Join(conns, "\n")
	if len(conns) != 4 {
		t.Fatalf("%d connection strings, want 4 (the development account's and three):\n%s", len(conns), all)
	}
	for _, want := range []string{
		"AccountName=given;AccountKey=" + given + ";TableEndpoint=http://127.0.0.1:",
		"AccountName=fromenv;AccountKey=<from env:CONFORM_TEST_ACCOUNT_KEY>;",
		"AccountName=fromfile;AccountKey=<from file:" + keyFile + ">;",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no connection string holds %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, fromEnv) || strings.Contains(all, fromFile) {
		t.Errorf("a key read from a variable or a file is printed:\n%s", all)
	}
	for _, c := range conns {
		_, rest, _ := strings.Cut(c, "AccountName=")
		name, _, _ := strings.Cut(rest, ";")
		if !strings.HasSuffix(c, "/"+name+";") {
			t.Errorf("%q: its TableEndpoint is not its account's", c)
		}
	}
}

func TestParseServeAccountRefusesWithoutShowingTheKey(t *testing.T) {
	t.Setenv("CONFORM_TEST_BAD_ACCOUNT_KEY", "not base64 secret!!")
	for _, arg := range []string{"a:key", "second:not base64 secret!!", "second:env:CONFORM_TEST_NO_SUCH_VARIABLE",
		"second:env:CONFORM_TEST_BAD_ACCOUNT_KEY", "second:file:" + filepath.Join(t.TempDir(), "missing")} {
		_, err := parseServeAccount(arg)
		if err == nil {
			t.Errorf("%q: accepted", arg)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: %v shows the key", arg, err)
		}
	}
}

// Issue 34 item 12: report --publish of a backend that reported no version (conform serve
// reports none) says so in one line and names --implementation-version.
func TestPublishWarnsOfAnEmptyVersion(t *testing.T) {
	dir := t.TempDir()
	rep := report.Report{Schema: report.Schema, Conform: "v9", Backends: []report.Backend{
		{Info: driver.Info{Name: "served", Kind: "endpoint", Driver: "rest"}, Verdict: "conforms", VerdictKind: verdict.Conforms},
	}, Rules: []report.RuleRow{{ID: "batch.a", Area: "batch", Level: "MUST", Cells: []report.Cell{{Outcome: verdict.Pass}}}}}
	if err := report.WriteDir(dir, rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"report", "--publish", dir}, true},
		{[]string{"report", "--publish", dir, "--implementation-version", "1.0"}, false},
	} {
		root := rootCmd()
		var stderr bytes.Buffer
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&stderr)
		root.SetArgs(c.args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(stderr.String(), "has no version") && strings.Contains(stderr.String(), "--implementation-version")
		if warned != c.warn || strings.Count(stderr.String(), "\n") > 1 {
			t.Errorf("conform %v: stderr %q, want a one-line warning: %v", c.args, stderr.String(), c.warn)
		}
	}
}

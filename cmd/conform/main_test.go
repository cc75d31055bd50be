package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/report"
)

var conformBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conform-cli")
	if err != nil {
		panic(err)
	}
	conformBin = filepath.Join(dir, "conform")
	if out, err := exec.Command("go", "build", "-o", conformBin, ".").CombinedOutput(); err != nil {
		panic("build conform: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// conform runs the built CLI and returns its standard output, standard error and exit code.
func conform(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(conformBin, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("conform %v did not finish in time", args)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

func TestListJSON(t *testing.T) {
	out, _, code := conform(t, "list", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rules []map[string]any
	if err := json.Unmarshal([]byte(out), &rules); err != nil {
		t.Fatal(err)
	}
	if len(rules) < 100 {
		t.Fatalf("only %d rules listed", len(rules))
	}
	for _, k := range []string{"id", "level", "area", "source"} {
		if s, _ := rules[0][k].(string); s == "" {
			t.Errorf("rule lacks %q: %v", k, rules[0])
		}
	}
}

func TestUsageErrorsExitTwoWithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--no-such-flag"},
		{"run", "--profile", "nonsense"},
		{"list", "--format", "yaml"},
		{"list", "--profile", "azure"},
		{"list", "--label-filter", "area:nope"},
		{"list", "--format", "json", "--label-filter", "area:nope"},
		{"serve", "--addr", "127.0.0.1:0", "--flavor", "mongo"},
		{"serve", "--addr", "127.0.0.1:0", "--cosmos-ru-per-second", "5"},
		{"serve", "--addr", "127.0.0.1:0", "--flavor", "cosmos", "--cosmos-ru-per-second", "-1"},
		{"frobnicate"},
		{"clean", "--backend", "reference", "--prefix", "prod"},
	} {
		_, stderr, code := conform(t, args...)
		if code != 2 {
			t.Errorf("conform %v: exit %d, want 2", args, code)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.HasPrefix(stderr, "conform: ") {
			t.Errorf("conform %v: want one line on stderr, got %q", args, stderr)
		}
	}
}

const secretKey = "c2VjcmV0LWtleS10aGF0LW11c3Qtbm90LWxlYWstMTIzNDU2Nzg5MA=="

func TestUnreachableEndpointExitsTwoWithoutLeakingTheKey(t *testing.T) {
	out := t.TempDir()
	conn := "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + secretKey + ";TableEndpoint=http://127.0.0.1:9/acct;"
	stdout, stderr, code := conform(t, "run", "--backend", "down="+conn, "--out", out)
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "down") {
		t.Errorf("stderr does not name the backend: %q", stderr)
	}
	if strings.Contains(stdout+stderr, "account-wide rules") {
		t.Errorf("the account-wide rules were tried against a backend that cannot be reached:\n%s%s", stdout, stderr)
	}
	assertNoSecret(t, out, stdout+stderr)
}

func assertNoSecret(t *testing.T, dir, output string) {
	t.Helper()
	if strings.Contains(output, secretKey) {
		t.Errorf("the account key appears in conform's output")
	}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte(secretKey)) {
				t.Errorf("the account key appears in %s", p)
			}
		}
		return nil
	})
}

func TestRunAgainstTheReferenceWritesTheReport(t *testing.T) {
	out := t.TempDir()
	_, stderr, code := conform(t, "run", "--backend", "reference", "--label-filter", "area:modification", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, f := range []string{report.FileJSON, report.FileMarkdown, report.FileHTML, report.FileJUnit} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	r, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Backends) != 1 || r.Backends[0].Verdict == "" || r.Backends[0].Counts.Run == 0 {
		t.Fatalf("report backends: %+v", r.Backends)
	}
	if r.Backends[0].Counts.SkippedByFilter == 0 {
		t.Errorf("the label filter left nothing out: %+v", r.Backends[0].Counts)
	}
	if !strings.Contains(stderr, "[reference]") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	// Merging the report with itself keeps one column per backend.
	merged := t.TempDir()
	if _, stderr, code := conform(t, "report", out, out, "--out", merged); code != 0 {
		t.Fatalf("conform report: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(merged, report.FileMarkdown)); err != nil {
		t.Fatal(err)
	}
}

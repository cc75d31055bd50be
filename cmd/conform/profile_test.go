package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/report"
)

func TestBackendProfile(t *testing.T) {
	for _, c := range []struct {
		arg, explicit, want string
	}{
		{"reference-cosmos", "", profileCosmos},
		{"reference-cosmos+sdk", "", profileCosmos},
		{"reference-cosmos", profileStorage, profileStorage},
		{"reference", "", ""},
		{"reference", profileCosmos, profileCosmos},
		{"mine=env:SOME_VARIABLE", "", ""},
		{"reference-cosmos=env:SOME_VARIABLE", "", ""},
	} {
		if got := backendProfile(c.arg, c.explicit); got != c.want {
			t.Errorf("backendProfile(%q, %q) = %q, want %q", c.arg, c.explicit, got, c.want)
		}
	}
}

// Issue 34 item 5: reference-cosmos without --profile is judged with the cosmos profile,
// and the run says so; with --profile storage it says in one line why specs fail.
func TestProfileFollowsTheBackend(t *testing.T) {
	differing := cosmosDiffering(true)
	if len(differing) == 0 {
		t.Fatal("no rule where Cosmos differs")
	}
	filter := differing[0]
	dir := filepath.Join(t.TempDir(), "report")
	_, stderr, code := conform(t, "run", "--backend", "reference-cosmos", "--label-filter", filter, "--no-corpus", "--out", dir)
	if code != 0 {
		t.Errorf("reference-cosmos on %s without --profile: exit %d, want 0\n%s", filter, code, stderr)
	}
	if !strings.Contains(stderr, "profile cosmos (follows reference-cosmos") {
		t.Errorf("the run does not say the profile follows the backend:\n%s", stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Backends) != 1 || rep.Backends[0].Profile != profileCosmos {
		t.Errorf("report's backends %+v, want reference-cosmos under the cosmos profile", rep.Backends)
	}

	_, stderr, code = conform(t, "run", "--backend", "reference-cosmos", "--profile", "storage", "--label-filter", filter, "--no-corpus", "--out", dir)
	if code != exitFailed {
		t.Errorf("reference-cosmos on %s with --profile storage: exit %d, want %d", filter, code, exitFailed)
	}
	if !strings.Contains(stderr, "--profile storage judges it as Azure Storage: the specs of Cosmos's documented differences will fail") {
		t.Errorf("no line says why the specs fail:\n%s", stderr)
	}
}

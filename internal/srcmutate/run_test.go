package srcmutate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunnerOnFixture runs every mutant of the fixture module through the runner: each is
// either discarded because it does not compile, or run; kills name the specs that caught
// them; the source tree is never changed.
func TestRunnerOnFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module once per mutant")
	}
	root, err := filepath.Abs("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(root, "calc.go"))
	ms, err := Enumerate(root, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(Config{Root: root, Package: ".", Run: "^TestConformance$", Timeout: 2 * time.Minute,
		Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if base, err := r.Baseline(ctx); err != nil || len(base) != 0 {
		t.Fatalf("baseline: %v, failed %v", err, base)
	}
	status := map[int]Result{}
	for _, m := range ms {
		res := r.Run(ctx, m)
		status[m.ID] = res
		if res.Seconds <= 0 {
			t.Errorf("%s: took %v s", m, res.Seconds)
		}
		// A mutant is discarded exactly when it does not compile.
		src, _ := os.ReadFile(filepath.Join(root, m.File))
		mutated, _ := Apply(src, m)
		compiles := buildsStandalone(t, mutated)
		switch {
		case res.Status == NotViable && compiles:
			t.Errorf("%s compiles but was discarded: %s", m, res.Detail)
		case res.Status != NotViable && !compiles:
			t.Errorf("%s does not compile but was %s", m, res.Status)
		case res.Status == Crashed || res.Status == TimedOut:
			t.Errorf("%s: %s %s", m, res.Status, res.Detail)
		}
	}
	after, _ := os.ReadFile(filepath.Join(root, "calc.go"))
	if string(before) != string(after) {
		t.Fatal("the runner changed the source tree")
	}
	expect := func(id int, want Status, killedBy string) {
		t.Helper()
		res := status[id]
		if res.Status != want || (killedBy != "" && (len(res.KilledBy) != 1 || res.KilledBy[0] != killedBy)) {
			t.Errorf("%s: %s by %v, want %s by %q", res.Mutant, res.Status, res.KilledBy, want, killedBy)
		}
	}
	expect(1, Survived, "")                         // a > b → a >= b: equivalent in Max
	expect(2, Killed, "calc.max: picks the larger") // a > b → a <= b
	expect(3, NotViable, "")                        // string a - b
	expect(7, NotViable, "")                        // -x / 0: constant division by zero
	expect(8, Killed, "calc.clamp: clamps")         // !(x <= limit) → (x <= limit)
	sum := Summary{Results: nil}
	for _, m := range ms {
		sum.Results = append(sum.Results, status[m.ID])
	}
	if sum.KillsPerSpec()["calc.clamp: clamps"] < 2 || sum.KillsPerRule()["calc.clamp"] != sum.KillsPerSpec()["calc.clamp: clamps"] {
		t.Errorf("kills per spec: %v, per rule %v", sum.KillsPerSpec(), sum.KillsPerRule())
	}
}

// buildsStandalone compiles a mutated calc.go on its own, independently of the runner.
func buildsStandalone(t *testing.T, src []byte) bool {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/fixture\n\ngo 1.22\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "calc.go"), src, 0o644)
	cmd := exec.Command("go", "build", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return cmd.Run() == nil
}

func TestFailedSpecsReadsGinkgoReports(t *testing.T) {
	report := `[{"SpecReports":[
	 {"LeafNodeType":"It","LeafNodeText":"refuses","State":"failed","ContainerHierarchyTexts":["[backend reference]","Batch","empty"],
	  "ReportEntries":[{"Name":"conform.rule","Value":{"AsJSON":"{\"id\":\"batch.empty\"}"}}]},
	 {"LeafNodeType":"It","LeafNodeText":"by label","State":"panicked","ContainerHierarchyLabels":[["backend:reference"],["query.top","area:query"]]},
	 {"LeafNodeType":"It","LeafNodeText":"passes","State":"passed"},
	 {"LeafNodeType":"BeforeSuite","State":"failed"}]}]`
	got, err := FailedSpecs([]byte(report))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "batch.empty: Batch empty refuses|query.top: by label" {
		t.Fatalf("failed specs: %q", got)
	}
	if _, err := FailedSpecs([]byte("not json")); err == nil {
		t.Fatal("an unreadable report was accepted")
	}
}

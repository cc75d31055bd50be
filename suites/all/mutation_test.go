package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

var update = flag.Bool("update", false, "rewrite docs/MUTANTS.md and testdata/mutants.json from this mutation run")

// Where the mutation test keeps its results: the per-mutant failing rules (read by
// TestCatalogueCoverage without rerunning anything) and the table for readers.
const (
	mutationDataFile = "testdata/mutants.json"
	mutantsDocFile   = "../../docs/MUTANTS.md"
)

// mutationParallel is how many suite processes run at once (the machine has two cores).
const mutationParallel = 2

// mutationRunTimeout bounds one suite process; a run that exceeds it is a failure of the
// mutation test, not a hang.
const mutationRunTimeout = 3 * time.Minute

// slowRules are rules whose specs wait for real time (the reuse delay of a deleted table's
// name). A mutant's run leaves them out unless the mutant claims to break them, which keeps
// the whole mutation test within minutes.
var slowRules = []string{"tables.delete.name-reuse", "tables.delete.fresh-on-reuse", "pattern.high-volume-delete.recreated-empty",
	"pattern.high-volume-delete.name-reuse"}

// MutationData is the stored result of a mutation run (testdata/mutants.json).
type MutationData struct {
	// Caught and Total give the mutation score: mutants that at least one rule caught.
	Caught int `json:"caught"`
	Total  int `json:"total"`
	// Specified lists the rules whose specs ran and passed on the unmutated base backends:
	// the rules a mutant can make fail.
	Specified []string        `json:"specified"`
	Mutants   []MutantOutcome `json:"mutants"`
	// Unkilled lists the rules with specs that no behavioural mutant made fail; Pending the
	// rules without a spec that ran.
	Unkilled []UnkilledRule `json:"unkilled,omitempty"`
	Pending  []string       `json:"noSpecYet,omitempty"`
}

// MutantOutcome is one mutant's result.
type MutantOutcome struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Base        string   `json:"base"`
	LabelFilter string   `json:"labelFilter,omitempty"`
	Transport   bool     `json:"transport,omitempty"`
	Breaks      []string `json:"breaks"`
	// Killed lists the rules that failed (or errored) against the mutant and passed against
	// its base: the rules that caught it.
	Killed []string `json:"killed"`
	// Survived lists the rules of Breaks that did not fail although their specs ran.
	Survived []string `json:"survived,omitempty"`
	// AlsoFailed lists the rules of the mutant's AlsoFails that failed against it. The
	// other rules of Killed that are not in Breaks are undeclared (undeclaredOf).
	AlsoFailed []string `json:"alsoFailed,omitempty"`
	// NoSpec lists the rules of Breaks that have no spec that ran on the base yet.
	NoSpec []string `json:"noSpec,omitempty"`
}

// UnkilledRule is a rule with specs that no behavioural mutant makes fail.
type UnkilledRule struct {
	ID          string `json:"id"`
	Unbreakable string `json:"unbreakable,omitempty"`
}

// suiteRun is one process of the suite against one backend.
type suiteRun struct {
	target  string
	filter  string
	timeout time.Duration

	outcomes map[string]verdict.Outcome
	specs    map[string][]report.SpecResult
	err      error
	elapsed  time.Duration
}

// runSuite runs the suite in a child process of this test binary against r.target and
// records each rule's outcome, read through the report model.
func runSuite(ctx context.Context, dir string, r *suiteRun) {
	start := time.Now()
	defer func() { r.elapsed = time.Since(start) }()
	safe := strings.NewReplacer(":", "_", "@", "_", "|", "_", " ", "_").Replace(r.target)
	jsonPath := filepath.Join(dir, fmt.Sprintf("%s-%d.json", safe, time.Now().UnixNano()))
	args := []string{"-test.run=^TestConformance$", "-test.timeout=" + mutationRunTimeout.String(),
		"-ginkgo.json-report=" + jsonPath, "-ginkgo.seed=1", "-ginkgo.no-color"}
	if r.filter != "" {
		args = append(args, "-ginkgo.label-filter="+r.filter)
	}
	ctx, cancel := context.WithTimeout(ctx, mutationRunTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// Transport mutants drop connections on purpose: the retries of each call (as the SDKs
	// retry) need not wait an SDK's delays for that.
	cmd.Env = append(os.Environ(), "CONFORM_BACKENDS="+r.target, "CONFORM_IGNORE_BASELINES=1", "CONFORM_KEEP_FAILED=0",
		"CONFORM_RETRY_DELAY=2ms")
	if r.timeout > 0 {
		cmd.Env = append(cmd.Env, "CONFORM_SPEC_TIMEOUT="+r.timeout.String())
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if i := strings.Index(out.String(), "WARNING: DATA RACE"); i >= 0 {
		r.err = fmt.Errorf("data race in the suite against %s: %s", r.target, tail(out.String()[i:min(len(out.String()), i+3000)], 3000))
		return
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		r.err = fmt.Errorf("suite against %s wrote no report (%v): %s", r.target, runErr, tail(out.String(), 2000))
		return
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		r.err = fmt.Errorf("suite against %s: unreadable Ginkgo report (%v)", r.target, err)
		return
	}
	rep := report.Build([]report.Run{{Backend: driver.Info{Name: r.target}, Ginkgo: reports[0]}}, spec.Rules(), report.Meta{})
	r.outcomes, r.specs = map[string]verdict.Outcome{}, map[string][]report.SpecResult{}
	for _, row := range rep.Rules {
		r.outcomes[row.ID] = row.Cells[0].Outcome
		r.specs[row.ID] = row.Cells[0].Specs
	}
}

// focused reports whether the run selects specs with a Ginkgo filter, as spec authors do.
func focused() bool {
	for _, name := range []string{"ginkgo.label-filter", "ginkgo.focus", "ginkgo.focus-file"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "[]" {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// mutationFilter is the label filter of a mutant's run: the whole catalogue but the slow
// rules the mutant does not claim to break. A transport mutant keeps its own filter, or
// the areas it runs: it makes every call fail, and its run tests the framework's bounds.
func mutationFilter(m mutant.Mutant) string {
	if m.Transport {
		if m.LabelFilter != "" {
			return m.LabelFilter
		}
		var areas []string
		for _, a := range m.RunAreas() {
			areas = append(areas, "area:"+string(a))
		}
		return "(" + strings.Join(areas, " || ") + ")"
	}
	var parts []string
	for _, id := range slowRules {
		if !slices.Contains(m.Breaks, id) {
			parts = append(parts, "!"+id)
		}
	}
	return strings.Join(parts, " && ")
}

// Environment of TestMutants: CONFORM_MUTANTS names the mutants to run (comma-separated;
// "" or "1" runs all, "0" none); CONFORM_MUTANTS_SAMPLE runs that many of them, chosen by
// CONFORM_MUTANTS_SEED (any text: make test-all passes the day, so that the share rotates).
const (
	envMutants      = "CONFORM_MUTANTS"
	envMutantSample = "CONFORM_MUTANTS_SAMPLE"
	envMutantSeed   = "CONFORM_MUTANTS_SEED"
)

// selectMutants returns the mutants a run covers and whether they are all of them.
func selectMutants(t *testing.T) ([]mutant.Mutant, bool) {
	t.Helper()
	mutants := mutant.All()
	all := true
	if only := os.Getenv(envMutants); only != "" && only != "1" {
		var sel []mutant.Mutant
		for _, n := range strings.Split(only, ",") {
			m, ok := mutant.Lookup(strings.TrimSpace(n))
			if !ok {
				t.Fatalf("%s names unknown mutant %q", envMutants, n)
			}
			sel = append(sel, m)
		}
		mutants, all = sel, false
	}
	if v := os.Getenv(envMutantSample); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q: want a number of mutants", envMutantSample, v)
		}
		if n > 0 && n < len(mutants) {
			mutants, all = sampleMutants(mutants, n, os.Getenv(envMutantSeed)), false
		}
	}
	return mutants, all
}

// sampleMutants returns n of mutants, chosen by seed, in name order: the same seed chooses
// the same share.
func sampleMutants(mutants []mutant.Mutant, n int, seed string) []mutant.Mutant {
	h := fnv.New64a()
	h.Write([]byte(seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(len(mutants))))
	idx := rng.Perm(len(mutants))[:n]
	sort.Ints(idx)
	out := make([]mutant.Mutant, 0, n)
	for _, i := range idx {
		out = append(out, mutants[i])
	}
	return out
}

// timingDependent reports whether a rule's specs run concurrent clients, so that whether a
// mutant makes them fail depends on how the clients interleave. Such a failure is recorded
// only where the mutant claims it (and the test then requires it every time): the stored
// results must not change from one run to the next.
func timingDependent(id string) bool {
	r, ok := spec.LookupRule(id)
	if !ok {
		return false
	}
	text := strings.ToLower(r.Text)
	if r.Area == spec.AreaParallel {
		return true
	}
	for _, w := range []string{"concurren", "in parallel", "at the same time", "readers"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

func failed(o verdict.Outcome) bool {
	return o == verdict.Fail || o == verdict.Error || o == verdict.UnexpectedPass
}

func passed(o verdict.Outcome) bool { return o == verdict.Pass || o == verdict.Info }

// TestMutants runs the suite against every mutant (one process each, two at a time) and
// checks that each rule a mutant claims to break fails, and that every mutant is caught.
// With -update it rewrites docs/MUTANTS.md and testdata/mutants.json; without, it checks
// that they match this run.
func TestMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutation test runs the suite once per mutant; skipped with -short")
	}
	if os.Getenv("CONFORM_MUTANTS") == "0" {
		t.Skip("CONFORM_MUTANTS=0")
	}
	if focused() {
		t.Skip("a Ginkgo label filter or focus selects specs: this run is about them, not about the mutants")
	}
	start := time.Now()
	dir := t.TempDir()
	mutants, all := selectMutants(t)

	// One run per mutant over the whole catalogue, and one per base backend over the whole
	// suite, to tell a mutant's failures from failures of the base itself.
	mutantRun := map[string]*suiteRun{}
	baseOf := map[string]*suiteRun{}
	var order []*suiteRun
	for _, m := range mutants {
		if baseOf[m.BaseOrDefault()] == nil {
			baseOf[m.BaseOrDefault()] = &suiteRun{target: m.BaseOrDefault()}
			order = append([]*suiteRun{baseOf[m.BaseOrDefault()]}, order...)
		}
		r := &suiteRun{target: mutant.Prefix + m.Name, filter: mutationFilter(m), timeout: m.SpecTimeout}
		mutantRun[m.Name] = r
		order = append(order, r)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, mutationParallel)
	for _, r := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runSuite(t.Context(), dir, r)
		}()
	}
	wg.Wait()
	for _, r := range order {
		if r.elapsed > 30*time.Second {
			t.Logf("the suite against %s took %s", r.target, r.elapsed.Round(time.Second))
		}
	}

	data := MutationData{Total: len(mutants)}
	storedUndeclared := readStoredUndeclared()
	specified := map[string]bool{}
	for _, m := range mutants {
		base, run := baseOf[m.BaseOrDefault()], mutantRun[m.Name]
		if base.err != nil {
			t.Fatalf("base run of %s: %v", m.Name, base.err)
		}
		if run.err != nil {
			t.Errorf("mutant %s: %v", m.Name, run.err)
			continue
		}
		for id, o := range base.outcomes {
			if passed(o) {
				specified[id] = true
			}
		}
		res := MutantOutcome{Name: m.Name, Description: m.Description, Base: m.BaseOrDefault(), LabelFilter: m.LabelFilter,
			Transport: m.Transport, Breaks: m.Breaks, Killed: []string{}}
		// Over the whole catalogue, the rules that fail against the mutant must be the
		// ones it breaks: Breaks, which must fail, and AlsoFails, which may.
		var racy, undeclared []string
		for id, o := range run.outcomes {
			if !failed(o) || !passed(base.outcomes[id]) {
				continue
			}
			_, also := m.AlsoFails[id]
			declared := slices.Contains(m.Breaks, id) || also
			if !declared && !m.Transport && !timingDependent(id) {
				// (A rule that depends on the interleaving of concurrent clients is logged
				// below, not recorded: whether it fails beside this fault is chance.)
				undeclared = append(undeclared, id)
			}
			if timingDependent(id) && !slices.Contains(m.Breaks, id) {
				racy = append(racy, id)
				continue
			}
			res.Killed = append(res.Killed, id)
			if also {
				res.AlsoFailed = append(res.AlsoFailed, id)
			}
		}
		sort.Strings(res.AlsoFailed)
		sort.Strings(undeclared)
		checkUndeclared(t, m, undeclared, storedUndeclared)
		if len(racy) > 0 {
			sort.Strings(racy)
			t.Logf("mutant %s also failed %v, which depend on the interleaving of concurrent clients and are not recorded", m.Name, racy)
		}
		sort.Strings(res.Killed)
		if m.Transport {
			for _, id := range res.Killed {
				if o := run.outcomes[id]; o != verdict.Error {
					t.Errorf("transport mutant %s: rule %s is reported as %s; a dropped connection or a timeout must be reported as an error, not as a rule failure",
						m.Name, id, o)
				}
			}
		}
		for _, id := range m.Breaks {
			switch {
			case slices.Contains(res.Killed, id):
			case !passed(base.outcomes[id]):
				res.NoSpec = append(res.NoSpec, id)
			default:
				res.Survived = append(res.Survived, id)
				t.Errorf("mutant %s (%s) survived rule %s: its specs passed against the mutant (outcome %s); the spec is missing the case or too weak",
					m.Name, m.Description, id, run.outcomes[id])
			}
		}
		if len(res.Killed) > 0 {
			data.Caught++
		} else if len(res.NoSpec) < len(m.Breaks) {
			t.Errorf("mutant %s (%s) was not caught: no rule failed against it", m.Name, m.Description)
		}
		for _, id := range res.NoSpec {
			t.Logf("mutant %s: rule %s has no spec that ran yet", m.Name, id)
		}
		for id, specs := range run.specs {
			for _, s := range specs {
				if s.RunTime > 5 {
					t.Logf("mutant %s: spec %q of %s took %.1fs", m.Name, s.Text, id, s.RunTime)
				}
			}
		}
		data.Mutants = append(data.Mutants, res)
	}
	for id := range specified {
		data.Specified = append(data.Specified, id)
	}
	sort.Strings(data.Specified)
	data.Unkilled, data.Pending = unkilled(data)
	t.Logf("mutation score: %d of %d mutants caught (%.0f%%), %d rules without a killing mutant, in %s",
		data.Caught, data.Total, 100*float64(data.Caught)/float64(max(data.Total, 1)), len(data.Unkilled), time.Since(start).Round(time.Second))

	if !all {
		if !*update {
			// A share of the mutants checks their stored results; it says nothing about the
			// others.
			checkStoredSelection(t, data)
			return
		}
		// With -update, a selection replaces the stored results of the mutants it ran (a
		// mutant added or changed is recorded without rerunning all of them).
		merged, err := mergeSelection(data)
		if err != nil {
			t.Fatal(err)
		}
		data = merged
	}
	js, err := encodeMutationData(data)
	if err != nil {
		t.Fatal(err)
	}
	doc := renderMutantsDoc(data)
	if *update {
		if err := os.MkdirAll(filepath.Dir(mutationDataFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mutationDataFile, js, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mutantsDocFile, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for file, want := range map[string][]byte{mutationDataFile: js, mutantsDocFile: []byte(doc)} {
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (the suite or the mutants changed): rerun `go test ./suites/all -run TestMutants -update` and commit it", file)
		}
	}
	logDifferences(t, data)
}

// encodeMutationData renders the stored mutation results: indented, but each mutant's
// result on one line, which keeps the file small and a mutant's change one line of a diff.
func encodeMutationData(d MutationData) ([]byte, error) {
	lines := make([]string, 0, len(d.Mutants))
	for _, m := range d.Mutants {
		line, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		lines = append(lines, "    "+string(line))
	}
	d.Mutants = []MutantOutcome{}
	js, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	const empty = `"mutants": []`
	if len(lines) > 0 {
		js = bytes.Replace(js, []byte(empty), []byte("\"mutants\": [\n"+strings.Join(lines, ",\n")+"\n  ]"), 1)
	}
	return append(js, '\n'), nil
}

// checkStoredSelection requires the stored result of each mutant of a selection to be this
// run's.
func checkStoredSelection(t *testing.T, sel MutationData) {
	t.Helper()
	raw, err := os.ReadFile(mutationDataFile)
	if err != nil {
		t.Fatalf("read %s: %v", mutationDataFile, err)
	}
	var stored MutationData
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatalf("parse %s: %v", mutationDataFile, err)
	}
	for _, m := range sel.Mutants {
		i := slices.IndexFunc(stored.Mutants, func(o MutantOutcome) bool { return o.Name == m.Name })
		switch {
		case i < 0:
			t.Errorf("%s holds no result of mutant %s: rerun `CONFORM_MUTANTS=%s go test ./suites/all -run TestMutants -update`", mutationDataFile, m.Name, m.Name)
		case !reflect.DeepEqual(stored.Mutants[i], m):
			t.Errorf("%s is stale for mutant %s: stored %+v, this run %+v; rerun `CONFORM_MUTANTS=%s go test ./suites/all -run TestMutants -update`",
				mutationDataFile, m.Name, stored.Mutants[i], m, m.Name)
		}
	}
}

// mergeSelection returns the stored mutation data with the results of a selection of
// mutants in place of their stored ones, and the rules they claim or caught that showed to
// have specs added.
func mergeSelection(sel MutationData) (MutationData, error) {
	raw, err := os.ReadFile(mutationDataFile)
	if err != nil {
		return MutationData{}, err
	}
	var stored MutationData
	if err := json.Unmarshal(raw, &stored); err != nil {
		return MutationData{}, err
	}
	byName := map[string]MutantOutcome{}
	for _, m := range stored.Mutants {
		byName[m.Name] = m
	}
	for _, m := range sel.Mutants {
		byName[m.Name] = m
	}
	out := MutationData{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if _, ok := mutant.Lookup(name); !ok {
			continue
		}
		m := byName[name]
		out.Mutants = append(out.Mutants, m)
		out.Total++
		if len(m.Killed) > 0 {
			out.Caught++
		}
	}
	// The rules shown to have specs: the stored ones, and those the selection's mutants
	// claim or caught that ran on their base (a full run settles the others).
	specified := map[string]bool{}
	selRan := map[string]bool{}
	for _, id := range sel.Specified {
		selRan[id] = true
	}
	for _, id := range stored.Specified {
		specified[id] = true
	}
	for _, m := range sel.Mutants {
		for _, id := range append(append([]string(nil), m.Breaks...), m.Killed...) {
			if selRan[id] {
				specified[id] = true
			}
		}
	}
	for id := range specified {
		if _, ok := spec.LookupRule(id); !ok {
			delete(specified, id)
		}
	}
	out.Specified = slices.Sorted(maps.Keys(specified))
	out.Unkilled, out.Pending = unkilled(out)
	return out, nil
}

// logDifferences says how this run's results differ from the stored ones, mutant by mutant.
func logDifferences(t *testing.T, now MutationData) {
	raw, err := os.ReadFile(mutationDataFile)
	if err != nil {
		return
	}
	var stored MutationData
	if json.Unmarshal(raw, &stored) != nil {
		return
	}
	old := map[string]MutantOutcome{}
	for _, m := range stored.Mutants {
		old[m.Name] = m
	}
	for _, m := range now.Mutants {
		o, ok := old[m.Name]
		if !ok {
			t.Logf("new mutant %s", m.Name)
			continue
		}
		var gained, lost []string
		for _, id := range m.Killed {
			if !slices.Contains(o.Killed, id) {
				gained = append(gained, id)
			}
		}
		for _, id := range o.Killed {
			if !slices.Contains(m.Killed, id) {
				lost = append(lost, id)
			}
		}
		if len(gained)+len(lost) > 0 {
			t.Logf("mutant %s: now also caught by %v, no longer by %v", m.Name, gained, lost)
		}
	}
}

// unkilled returns the rules whose specs ran on a base but that no behavioural mutant made
// fail, and the rules that have no spec yet and are not marked unbreakable.
func unkilled(d MutationData) (rules []UnkilledRule, pending []string) {
	killed := map[string]bool{}
	for _, m := range d.Mutants {
		if m.Transport {
			continue
		}
		for _, id := range m.Killed {
			killed[id] = true
		}
	}
	for _, r := range spec.Rules() {
		switch {
		case killed[r.ID]:
		case slices.Contains(d.Specified, r.ID) || r.Unbreakable != "":
			rules = append(rules, UnkilledRule{ID: r.ID, Unbreakable: r.Unbreakable})
		default:
			pending = append(pending, r.ID)
		}
	}
	return rules, pending
}

// renderMutantsDoc renders docs/MUTANTS.md from a mutation run.
type ruleKills struct {
	rule  string
	kills int
}

// killsPerRule counts, for each rule, the mutants its specs caught: most first, then by id.
func killsPerRule(d MutationData) []ruleKills {
	n := map[string]int{}
	for _, m := range d.Mutants {
		for _, id := range m.Killed {
			n[id]++
		}
	}
	out := make([]ruleKills, 0, len(n))
	for id, k := range n {
		out = append(out, ruleKills{id, k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].kills != out[j].kills {
			return out[i].kills > out[j].kills
		}
		return out[i].rule < out[j].rule
	})
	return out
}

// readStoredUndeclared returns, per mutant, the undeclared failures testdata/mutants.json
// records (undeclaredOf), or nil when it cannot be read.
func readStoredUndeclared() map[string][]string {
	raw, err := os.ReadFile(mutationDataFile)
	if err != nil {
		return nil
	}
	var stored MutationData
	if json.Unmarshal(raw, &stored) != nil {
		return nil
	}
	out := map[string][]string{}
	for _, m := range stored.Mutants {
		out[m.Name] = undeclaredOf(m)
	}
	return out
}

// checkUndeclared holds a mutant's undeclared failures (rules that failed against it over
// the whole catalogue although it declares neither that it breaks them nor why they fail
// too: failures blamed on a rule whose subject it did not break) to the ones
// testdata/mutants.json records as still open. A failure the record lacks fails the test;
// so does a recorded one that no longer fails, until the record is rewritten (-update),
// so the record can only shrink by a run that shows it. With -update the run's are
// recorded, and MUTANTS.md lists them per mutant as not yet exact.
func checkUndeclared(t *testing.T, m mutant.Mutant, undeclared []string, stored map[string][]string) {
	t.Helper()
	if *update {
		if len(undeclared) > 0 {
			t.Logf("mutant %s fails %d rules it does not declare (recorded as open): %s", m.Name, len(undeclared), strings.Join(undeclared, ", "))
		}
		return
	}
	was := stored[m.Name]
	var added, gone []string
	for _, id := range undeclared {
		if !slices.Contains(was, id) {
			added = append(added, id)
		}
	}
	for _, id := range was {
		if !slices.Contains(undeclared, id) {
			gone = append(gone, id)
		}
	}
	if len(added) > 0 {
		t.Errorf("mutant %s (%s) fails rules it declares neither in Breaks nor in AlsoFails, and %s does not record as open: %s; "+
			"each is a spec that blames another rule's subject (fix its blame) or a rule the fault breaks too (declare it, with why, in AlsoFails)",
			m.Name, m.Description, mutationDataFile, strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		t.Errorf("mutant %s no longer fails %s, which %s records as open undeclared failures: rerun `CONFORM_MUTANTS=%s go test ./suites/all -run TestMutants -update`",
			m.Name, strings.Join(gone, ", "), mutationDataFile, m.Name)
	}
	if len(undeclared) > 0 && len(added) == 0 {
		t.Logf("mutant %s still fails %d rules it does not declare, recorded as open in %s", m.Name, len(undeclared), mutationDataFile)
	}
}

// undeclaredOf returns the rules that failed against a behavioural mutant, over the whole
// catalogue, though it declares neither that it breaks them nor why they fail too: each is
// a failure blamed on a rule whose subject the mutant did not break.
func undeclaredOf(m MutantOutcome) []string {
	if m.Transport {
		return nil
	}
	var out []string
	for _, id := range m.Killed {
		if !slices.Contains(m.Breaks, id) && !slices.Contains(m.AlsoFailed, id) {
			out = append(out, id)
		}
	}
	return out
}

// wholeCatalogue says in words how a mutant's failures over the whole catalogue compare
// with what it declares.
func wholeCatalogue(m MutantOutcome) string {
	var parts []string
	switch {
	case m.Transport:
		return "its areas only (transport)"
	case len(undeclaredOf(m)) > 0:
		parts = append(parts, "**also fails undeclared** "+strings.Join(undeclaredOf(m), ", "))
	case len(m.Survived) > 0:
		parts = append(parts, "**a declared rule survived**")
	default:
		parts = append(parts, "exactly its rules")
	}
	if len(m.AlsoFailed) > 0 {
		parts = append(parts, "with "+strings.Join(m.AlsoFailed, ", ")+" (declared in AlsoFails)")
	}
	return strings.Join(parts, "; ")
}

func renderMutantsDoc(d MutationData) string {
	var b strings.Builder
	b.WriteString("# Mutants: the suite tested by deliberately wrong backends\n\n")
	b.WriteString("Generated by `go test ./suites/all -run TestMutants -update` from the mutation run; the test fails when this\n")
	b.WriteString("file no longer matches the suite. Each mutant is a decorator over a correct backend (suites/driver/mutant) that\n")
	b.WriteString("breaks one documented behaviour; run one with `conform run --backend mutant:NAME` (or `mutant:NAME@BASE`).\n")
	b.WriteString("A rule catches a mutant when it fails (or errors) against the mutant and passes against the mutant's base.\n")
	b.WriteString("Each mutant runs against the whole catalogue (but the specs that wait for a deleted table's name, unless it\n")
	b.WriteString("claims to break them; a transport mutant runs its own areas), and the test requires that the rules that fail\n")
	b.WriteString("are exactly the ones the mutant declares: those it breaks, which must fail, and those it says why it breaks too\n")
	b.WriteString("(`AlsoFails`), which may; every other rule passes, is blocked, is skipped or does not apply. The column \"Whole\n")
	b.WriteString("catalogue\" gives that result. A composite mutant carries several mutants' faults at once, as an emulator does.\n")
	b.WriteString("The whole matrix is `make mutation-matrix`, a CI step of its own (about 17 minutes on two busy cores, a\n")
	b.WriteString("suite run per mutant of 3 to 20 s, up to 2 minutes for the mutants that wait on purpose); `make test-all`\n")
	b.WriteString("runs a share of 20 mutants that changes every day (`CONFORM_MUTANTS_SAMPLE`, `CONFORM_MUTANTS_SEED`).\n\n")
	fmt.Fprintf(&b, "**Every rule can fail: %d of %d mutants are caught.** The mutants are written one or a few per rule and\n", d.Caught, d.Total)
	b.WriteString("kept once a spec catches them, so this count can only read 100%: it shows that each rule's specs are able to\n")
	b.WriteString("fail, not how many faults the suite would find in an implementation nobody wrote for it. The section \"Kills per\n")
	b.WriteString("rule\" below says which rules catch most of them.\n\n")
	exact, behavioural := 0, 0
	for _, m := range d.Mutants {
		if !m.Transport {
			behavioural++
			if len(undeclaredOf(m)) == 0 && len(m.Survived) == 0 {
				exact++
			}
		}
	}
	fmt.Fprintf(&b, "**Blame over the whole catalogue: %d of %d behavioural mutants fail exactly the rules they declare.**\n\n", exact, behavioural)
	b.WriteString("The others also fail rules they do not declare (\"also fails undeclared\" below): each such rule's spec still\n")
	b.WriteString("fails through a feature it merely uses, where it should be blocked by the rule that covers that feature. They are\n")
	b.WriteString("open work, recorded in testdata/mutants.json: the test fails when a mutant fails an undeclared rule the record\n")
	b.WriteString("lacks, and when a recorded one no longer fails, so the record only shrinks, by a run that shows it.\n\n")
	b.WriteString("| Mutant | What it breaks | Must fail | Rules that caught it | Whole catalogue |\n|---|---|---|---|---|\n")
	for _, m := range d.Mutants {
		name := "`" + m.Name + "`"
		if m.Base != mutant.DefaultBase {
			name += " (on " + m.Base + ")"
		}
		if m.Transport {
			name += " (transport)"
		}
		must := make([]string, 0, len(m.Breaks))
		for _, id := range m.Breaks {
			switch {
			case slices.Contains(m.Survived, id):
				must = append(must, id+" **(survived)**")
			case slices.Contains(m.NoSpec, id):
				must = append(must, id+" (no spec yet)")
			default:
				must = append(must, id)
			}
		}
		caught := "**not caught**"
		if len(m.Killed) > 0 {
			const shown = 10
			caught = fmt.Sprintf("%d: %s", len(m.Killed), strings.Join(m.Killed[:min(shown, len(m.Killed))], ", "))
			if len(m.Killed) > shown {
				caught += fmt.Sprintf(", and %d more", len(m.Killed)-shown)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, m.Description, strings.Join(must, ", "), caught, wholeCatalogue(m))
	}
	b.WriteString("\nThe complete list of rules that caught each mutant is in `suites/all/testdata/mutants.json`.\n")
	b.WriteString("Transport mutants test the framework's timeouts and error reporting; the catalogue coverage leaves them out.\n")
	b.WriteString("A failure of a rule whose specs run concurrent clients depends on how the clients interleave: it is recorded\n")
	b.WriteString("only where the mutant claims it in its Breaks, and the test then requires it on every run.\n")
	b.WriteString("\n## Kills per rule\n\n")
	b.WriteString("How many mutants each rule's specs catch (rules that catch none are listed in the next section).\n\n")
	b.WriteString("| Rule | Mutants caught |\n|---|---:|\n")
	for _, k := range killsPerRule(d) {
		fmt.Fprintf(&b, "| %s | %d |\n", k.rule, k.kills)
	}
	b.WriteString("\n## Rules without a killing mutant\n\n")
	if len(d.Unkilled) == 0 {
		b.WriteString("None: every rule with a spec is made to fail by at least one behavioural mutant.\n")
	} else {
		b.WriteString("| Rule | Why no decorator can break it |\n|---|---|\n")
		for _, r := range d.Unkilled {
			why := r.Unbreakable
			if why == "" {
				why = "**no mutant yet, and no reason given**"
			}
			fmt.Fprintf(&b, "| %s | %s |\n", r.ID, why)
		}
	}
	if len(d.Pending) > 0 {
		fmt.Fprintf(&b, "\n## Rules without a spec yet (%d)\n\n%s\n", len(d.Pending), strings.Join(d.Pending, ", "))
	}
	return b.String()
}

// TestCatalogueCoverage checks, from the stored mutation results, that every rule of the
// catalogue is made to fail by at least one behavioural mutant or says why no decorator
// can break it, and that the stored results still describe the mutants and the catalogue.
func TestCatalogueCoverage(t *testing.T) {
	raw, err := os.ReadFile(mutationDataFile)
	if err != nil {
		t.Fatalf("read %s: %v (run `go test ./suites/all -run TestMutants -update`)", mutationDataFile, err)
	}
	var d MutationData
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("parse %s: %v", mutationDataFile, err)
	}
	stale := func(format string, args ...any) {
		t.Errorf("%s is stale: "+format+"; rerun `go test ./suites/all -run TestMutants -update`", append([]any{mutationDataFile}, args...)...)
	}
	var stored []string
	for _, m := range d.Mutants {
		stored = append(stored, m.Name)
		if cur, ok := mutant.Lookup(m.Name); ok && !slices.Equal(cur.Breaks, m.Breaks) {
			stale("mutant %s now claims to break %v", m.Name, cur.Breaks)
		}
		for _, id := range m.Killed {
			if _, ok := spec.LookupRule(id); !ok {
				stale("rule %s, which caught %s, is no longer in the catalogue", id, m.Name)
			}
		}
	}
	var current []string
	for _, m := range mutant.All() {
		current = append(current, m.Name)
		for _, id := range m.Breaks {
			if _, ok := spec.LookupRule(id); !ok {
				t.Errorf("mutant %s claims to break unknown rule %s", m.Name, id)
			}
		}
	}
	if !slices.Equal(stored, current) {
		stale("it holds mutants %v, the package has %v", stored, current)
	}

	// A rule that a mutant fails without declaring it (a failure blamed on the wrong rule,
	// which TestMutants reports) does not show that a decorator can break its subject.
	killers, declaredKillers := map[string][]string{}, map[string][]string{}
	for _, m := range d.Mutants {
		if !m.Transport {
			for _, id := range m.Killed {
				killers[id] = append(killers[id], m.Name)
				if !slices.Contains(undeclaredOf(m), id) {
					declaredKillers[id] = append(declaredKillers[id], m.Name)
				}
			}
		}
	}
	var missing, pending []string
	for _, r := range spec.Rules() {
		switch {
		case len(declaredKillers[r.ID]) > 0 && r.Unbreakable != "":
			t.Errorf("rule %s is marked unbreakable (%s) but mutants %v make it fail; drop the mark", r.ID, r.Unbreakable, declaredKillers[r.ID])
		case len(killers[r.ID]) > 0, r.Unbreakable != "":
		case slices.Contains(d.Specified, r.ID):
			missing = append(missing, r.ID)
		default:
			pending = append(pending, r.ID)
		}
	}
	for _, id := range missing {
		if why, ok := awaitingAMutant[id]; ok {
			t.Logf("rule %s has no mutant of its own yet: %s", id, why)
			continue
		}
		t.Errorf("rule %s has specs, but no mutant makes it fail and it states no Unbreakable reason", id)
	}
	for id := range awaitingAMutant {
		if len(killers[id]) > 0 {
			t.Errorf("rule %s is listed as awaiting a mutant, but mutants %v make it fail: strike it from awaitingAMutant", id, killers[id])
		}
	}
	if len(pending) > 0 {
		t.Logf("%d rules have no spec that ran in the stored mutation run: %s", len(pending), strings.Join(pending, ", "))
	}
	t.Logf("catalogue coverage: %d rules, %d failed by a mutant, %d unbreakable, %d without a spec yet",
		len(spec.Rules()), len(killers), countUnbreakable(), len(pending))
}

// recordsOnly is why a rule of awaitingAMutant has no mutant: a MAY rule whose spec asserts
// nothing of its own subject, only records which allowed answer came (its other steps are
// other rules' preconditions), so no fault can fail it without being a mis-blame.
const recordsOnly = "a MAY rule whose spec only records which allowed answer came; its other steps are preconditions of other rules"

// awaitingAMutant lists the rules with specs that no mutant makes fail, each with why: open
// work that TestCatalogueCoverage logs instead of failing on, and fails on once a mutant
// makes the rule fail (strike it then), so the list only shrinks.
var awaitingAMutant = map[string]string{
	"pattern.eventual.converges": "every step of its worker is another rule's subject (a repeated Insert Or Replace: pattern.eventual.upsert-repeatable; " +
		"a second delete's 404: pattern.eventual.delete-gone; a read of the deleted entity: modify.delete.removes), and the archived copy " +
		"surviving the delete from the current table is tables.isolation's: a fault that breaks the convergence breaks one of them first",
	"pattern.index-entities.external-list": "its subject is point queries across partitions returning the listed employees: a Get Entity that " +
		"returns another partition's entity is entities.key.identity's subject, which blocks it, and one that loses or changes an employee's " +
		"property fails every pattern spec that reads an employee back; only a fault keyed on the fixture's data (the Joneses) would fail it alone",
	"query.filter.syntax.message": recordsOnly,
	"rel.join-in-client": "its subject is an unfiltered scan of a table of one partition coming back whole in one page: a scan that drops an " +
		"entity of such a table also fails the auth, batch, ordering and query specs that read their own table back that way " +
		"(single-partition-scan-drops-last, tried, failed 11 other MUST rules), and one that pages it is blocked by pagination.no-extra-page",
	"service.cors.vary": recordsOnly,
}

func countUnbreakable() int {
	n := 0
	for _, r := range spec.Rules() {
		if r.Unbreakable != "" {
			n++
		}
	}
	return n
}

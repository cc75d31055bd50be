package bench

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/framework"
)

func TestTablePrefixIsTheFrameworks(t *testing.T) {
	if TablePrefix != framework.TablePrefix {
		t.Fatalf("TablePrefix %q, framework's %q: `conform clean` would miss benchmark tables", TablePrefix, framework.TablePrefix)
	}
	if n := newTableName(); !strings.HasPrefix(n, TablePrefix) || len(n) > 63 || !framework.IsRunTable(n) {
		t.Fatalf("table name %q", n)
	}
}

func TestZipfianFavoursFewKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, draws = 1000, 100_000
	for _, d := range Distributions() {
		c, err := newChooser(d)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, n)
		for i := 0; i < draws; i++ {
			k := c.next(r, n)
			if k < 0 || k >= n {
				t.Fatalf("%s chose %d outside [0, %d)", d, k, n)
			}
			counts[k]++
		}
		sorted := slices.Clone(counts)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		top10 := 0
		for _, c := range sorted[:10] {
			top10 += c
		}
		share := float64(top10) / draws
		switch d {
		case Uniform:
			if share > 0.03 {
				t.Errorf("uniform: the 10 most chosen keys got %.1f%% of the draws", share*100)
			}
		default:
			if share < 0.2 {
				t.Errorf("%s: the 10 most chosen keys got only %.1f%% of the draws", d, share*100)
			}
		}
		if d == Latest && counts[n-1] < counts[0]*10 {
			t.Errorf("latest: the newest key was chosen %d times, the oldest %d", counts[n-1], counts[0])
		}
	}
	if _, err := newChooser("pareto"); err == nil {
		t.Error("an unknown distribution was accepted")
	}
}

func TestZipfianFollowsAGrowingKeySpace(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := &latestChooser{z: zipf{theta: ZipfianConstant}}
	for n := int64(1); n < 3000; n += 7 {
		if k := c.next(r, n); k < 0 || k >= n {
			t.Fatalf("n=%d: chose %d", n, k)
		}
	}
}

func TestAckCounterWaitsForGaps(t *testing.T) {
	c := newAckCounter(10)
	a, b := c.reserve(), c.reserve()
	if a != 10 || b != 11 {
		t.Fatalf("reserved %d, %d", a, b)
	}
	c.ack(b)
	if got := c.readable(); got != 10 {
		t.Fatalf("readable %d before record 10 is acknowledged", got)
	}
	c.ack(a)
	if got := c.readable(); got != 12 {
		t.Fatalf("readable %d, want 12", got)
	}
}

func TestMeterMergesWorkers(t *testing.T) {
	m := NewMeter()
	w1, w2 := m.Worker(nil), m.Worker(nil)
	now := time.Now()
	for i := 0; i < 99; i++ {
		w1.record(KindGet, "p", now, 1, nil)
	}
	w2.record(KindQuery, PartitionQuery, now.Add(-50*time.Millisecond), 20, nil)
	w2.record(KindQuery, PartitionQuery, now, 0, errors.New("boom"))
	s := m.Summary(time.Second)
	if s.Requests != 101 || s.Entities != 119 || s.Errors != 1 {
		t.Fatalf("requests %d entities %d errors %d", s.Requests, s.Entities, s.Errors)
	}
	if s.OpsPerSec != 101 || s.EntitiesPerSec != 119 {
		t.Fatalf("ops/s %v entities/s %v", s.OpsPerSec, s.EntitiesPerSec)
	}
	if !(s.Latency.P50 <= s.Latency.P99 && s.Latency.P99 <= s.Latency.P999 && s.Latency.P999 <= s.Latency.Max) {
		t.Fatalf("percentiles out of order: %+v", s.Latency)
	}
	if s.Latency.Max < 49_000 {
		t.Fatalf("the 50 ms request is missing: max %v µs", s.Latency.Max)
	}
	if len(s.Kinds) != 2 || s.Kinds[0].Kind != "get" || s.Kinds[1].Kind != "query" || s.Kinds[1].Errors != 1 {
		t.Fatalf("kinds %+v", s.Kinds)
	}
}

func TestSelect(t *testing.T) {
	all := Catalog(false)
	for _, tc := range []struct {
		patterns []string
		want     int
	}{
		{nil, len(all)},
		{[]string{"ycsb"}, 18},
		{[]string{"ycsb-default"}, 6},
		{[]string{"ops", "ycsb-default", "guide"}, len(all) - 12},
		{[]string{"PointGet"}, 1},
		{[]string{"ycsb/workload=a/*"}, 3},
		{[]string{"YCSB/workload=B/dist=zipfian"}, 1},
		{[]string{"lookup", "hotpartition"}, 5},
		{[]string{"nothing"}, 0},
	} {
		if got := len(Select(all, tc.patterns)); got != tc.want {
			t.Errorf("Select(%q) = %d cases, want %d", tc.patterns, got, tc.want)
		}
	}
	var defaults []string
	for _, c := range Select(all, []string{TagYCSBDefault}) {
		defaults = append(defaults, c.Sub())
	}
	if got := strings.Join(defaults, " "); got != "workload=A/dist=zipfian workload=B/dist=zipfian workload=C/dist=zipfian workload=D/dist=latest workload=E/dist=zipfian workload=F/dist=zipfian" {
		t.Errorf("%s selects %s; YCSB's own distributions are zipfian, latest for D", TagYCSBDefault, got)
	}
	names := map[string]bool{}
	for _, c := range all {
		if names[c.Name()] {
			t.Errorf("two cases are named %s", c.Name())
		}
		names[c.Name()] = true
	}
}

func TestYCSBMixesAddUp(t *testing.T) {
	for _, d := range Distributions() {
		for _, w := range YCSBCoreWorkloads(d, false) {
			if err := w.Validate(); err != nil {
				t.Error(err)
			}
		}
	}
	bad := YCSB{Name: "X", Read: 0.5, Distribution: Uniform, RecordCount: 1, Partitions: 1, FieldCount: 1, FieldLength: 1}
	if bad.Validate() == nil {
		t.Error("a mix adding up to 0.5 was accepted")
	}
}

// runCases runs each case for a few operations against b and returns each case's error.
func runCases(t *testing.T, b api.Backend, cases []Case, ops int) map[string]error {
	t.Helper()
	errs := map[string]error{}
	env := &Env{Backend: b, Name: "test", Seed: 42, Workers: 2, Quick: true}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		l, err := Prepare(ctx, env, c)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", c.Name(), err)
		}
		res, err := l.Run(ctx, Limit{Ops: ops}, nil)
		errs[c.Name()] = err
		if err == nil && (res.Steps != int64(ops) || res.Requests < int64(ops) || res.OpsPerSec <= 0) {
			errs[c.Name()] = errors.New("the run did not count its operations")
			t.Errorf("%s: steps %d requests %d ops/s %v", c.Name(), res.Steps, res.Requests, res.OpsPerSec)
		}
		if err := l.Close(ctx); err != nil {
			t.Errorf("%s: close: %v", c.Name(), err)
		}
		cancel()
	}
	return errs
}

// TestEveryCaseRunsAndChecksOutOnTheReference runs every case a few times against the
// reference in process: the workloads' own checks must hold on a correct backend, and no
// table may be left behind.
func TestEveryCaseRunsAndChecksOutOnTheReference(t *testing.T) {
	ref := reference.New()
	ops := 40
	if testing.Short() {
		ops = 8
	}
	for name, err := range runCases(t, ref, Catalog(false), ops) {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	page, err := ref.QueryTables(context.Background(), api.TableQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tables) != 0 {
		t.Errorf("tables left behind: %v", page.Tables)
	}
}

// mutant is a deliberately wrong backend: the reference with one behaviour broken.
type mutant struct {
	api.Backend
	get    func(e api.Entity) api.Entity
	query  func(p api.Page) api.Page
	update func(mode api.UpdateMode) api.UpdateMode
	noop   bool // deletes and inserts succeed without doing anything
}

func (m *mutant) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil && m.get != nil {
		e = m.get(e)
	}
	return e, err
}

func (m *mutant) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil && m.query != nil {
		p = m.query(p)
	}
	return p, err
}

func (m *mutant) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if m.update != nil {
		mode = m.update(mode)
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *mutant) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if m.noop {
		return nil
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *mutant) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if m.noop {
		e.ETag = `W/"datetime'2024-01-01T00%3A00%3A00Z'"`
		return e, nil
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

// TestWrongBackendsDoNotWin checks that each kind of wrong answer fails the cases that
// depend on it, as a *WrongResultError.
func TestWrongBackendsDoNotWin(t *testing.T) {
	byName := map[string]Case{}
	for _, c := range Catalog(false) {
		byName[c.Name()] = c
	}
	pick := func(names ...string) []Case {
		var out []Case
		for _, n := range names {
			c, ok := byName[n]
			if !ok {
				t.Fatalf("no case %s", n)
			}
			out = append(out, c)
		}
		return out
	}
	ds := "/partitions=16/payload=1KiB"
	for _, tc := range []struct {
		name  string
		m     *mutant
		cases []Case
	}{
		{"get answers another row", &mutant{get: func(e api.Entity) api.Entity { e.RowKey += "x"; return e }},
			pick("PointGet"+ds, "YCSB/workload=C/dist=uniform", "Lookup/employees=2000/style=point")},
		{"get answers stale data", &mutant{get: func(e api.Entity) api.Entity {
			e = e.Clone()
			for k, v := range e.Properties {
				if v.Type == api.EdmString && len(v.Str) > 8 {
					e.Properties[k] = api.String("stale" + v.Str[5:])
				}
			}
			return e
		}}, pick("PointGet"+ds, "SecondaryIndex/employees=2000/lookup=index-entity")},
		{"queries drop their last entity", &mutant{query: func(p api.Page) api.Page {
			if len(p.Entities) > 0 {
				p.Entities = p.Entities[:len(p.Entities)-1]
			}
			return p
		}}, pick("PartitionScan"+ds, "TableScan"+ds, "RangeQuery"+ds+"/rows=20", "Paging/entities=10000/top=1000", "LogTail/entries=4000/top=20", "DataSeries/layout=entity-per-hour")},
		{"queries answer out of order", &mutant{query: func(p api.Page) api.Page {
			slices.Reverse(p.Entities)
			return p
		}}, pick("PartitionScan"+ds, "TableScan"+ds, "YCSB/workload=E/dist=uniform")},
		{"merge replaces", &mutant{update: func(api.UpdateMode) api.UpdateMode { return api.Replace }}, pick("Merge"+ds, "YCSB/workload=A/dist=uniform")},
		{"replace merges", &mutant{update: func(api.UpdateMode) api.UpdateMode { return api.Merge }}, pick("Replace" + ds)},
		{"writes are acknowledged but dropped", &mutant{noop: true}, pick("Delete"+ds, "Insert"+ds, "HotPartition/layout=spread")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Backend = reference.New()
			for name, err := range runCases(t, tc.m, tc.cases, 2*sampleEvery) {
				var we *WrongResultError
				if !errors.As(err, &we) {
					t.Errorf("%s: want a wrong-result failure, got %v", name, err)
				}
			}
		})
	}
}

// flaky fails every other request it sees.
type flaky struct {
	api.Backend
	n int
}

func (f *flaky) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	f.n++
	if f.n%2 == 0 {
		return api.Entity{}, errors.New("connection reset")
	}
	return f.Backend.GetEntity(ctx, table, pk, rk, sel)
}

func TestAnErrorStormFailsTheRun(t *testing.T) {
	b := &flaky{Backend: reference.New()}
	env := &Env{Backend: b, Name: "flaky", Seed: 1, Workers: 1, Quick: true}
	ctx := context.Background()
	l, err := Prepare(ctx, env, CasesOf("PointGet", false)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	res, err := l.Run(ctx, Limit{Ops: 100}, nil)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("want a failed run naming the cause, got %v", err)
	}
	if res.Errors != 50 {
		t.Fatalf("errors %d, want 50", res.Errors)
	}
}

func TestRunForADuration(t *testing.T) {
	env := &Env{Backend: reference.New(), Name: "reference", Seed: 7, Quick: true}
	ctx := context.Background()
	c := CasesOf("Delete", false)[0]
	l, err := Prepare(ctx, env, c)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	start := time.Now()
	res, err := l.Run(ctx, Limit{Duration: 150 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); res.Elapsed > time.Second || took > time.Minute {
		t.Fatalf("a 150 ms run took %v (timed %v)", took, res.Elapsed)
	}
	if res.Steps == 0 || res.Steps > deletePool/10 {
		t.Fatalf("steps %d (pool %d)", res.Steps, deletePool)
	}
}

// TestCeilingAgainstNoopAndReference drives the SDK ceiling's operations through aztables
// against the reference's HTTP server and against the do-nothing server replaying the
// reference's captured answers, which must be the same bytes.
func TestCeilingAgainstNoopAndReference(t *testing.T) {
	ref := httptest.NewServer(tableserver.New(reference.New()))
	defer ref.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	answers, err := CaptureCeilingAnswers(ctx, ref.URL+"/"+wire.DevAccountName)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"insert", "patch", "query", "get:" + ceilingRowKey(0), "get:" + ceilingRowKey(ceilingRows-1)} {
		if _, ok := answers[key]; !ok {
			t.Fatalf("no captured answer for %s; have %v", key, slices.Sorted(maps.Keys(answers)))
		}
	}
	if a := answers["query"]; a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"RowKey":"r019"`) {
		t.Fatalf("captured query answer %d %.200s", a.Status, a.Body)
	}
	noop := httptest.NewServer(ReplayHandler(answers))
	defer noop.Close()
	hc := &http.Client{Transport: NewCeilingTransport(), Timeout: 30 * time.Second}
	for _, tgt := range []struct {
		url    string
		canned bool
	}{{noop.URL, true}, {ref.URL, false}} {
		c, err := NewCeiling(ctx, tgt.url+"/"+wire.DevAccountName, tgt.canned, hc)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range CeilingOps() {
			s, err := c.Run(ctx, op, Limit{Ops: CeilingWorkers}, nil)
			if err != nil {
				t.Errorf("%s %s: %v", tgt.url, op, err)
				continue
			}
			if s.Requests != CeilingWorkers || s.Errors != 0 {
				t.Errorf("%s %s: %d requests, %d errors", tgt.url, op, s.Requests, s.Errors)
			}
			if op == CeilingQuery20 && s.Entities != ceilingRows*s.Requests {
				t.Errorf("%s query20: %d entities in %d queries", tgt.url, s.Entities, s.Requests)
			}
		}
		if err := c.Close(ctx); err != nil {
			t.Error(err)
		}
	}
}

// TestCeilingClientProcess runs one short phase of the ceiling with the client in its own
// process, against the reference and against the do-nothing server, and checks that both
// answered with bodies of the same size.
func TestCeilingClientProcess(t *testing.T) {
	ref := httptest.NewServer(tableserver.New(reference.New()))
	defer ref.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answers, err := CaptureCeilingAnswers(ctx, ref.URL+"/"+wire.DevAccountName)
	if err != nil {
		t.Fatal(err)
	}
	noop := httptest.NewServer(ReplayHandler(answers))
	defer noop.Close()
	phases := map[string][]ceilingPhase{}
	for _, tgt := range []ceilingTarget{
		{name: ceilingNoop, endpoint: noop.URL + "/" + wire.DevAccountName, canned: true, inProcess: true},
		{name: "reference-http", endpoint: ref.URL + "/" + wire.DevAccountName, inProcess: true},
	} {
		l, err := StartSDKLoad(ctx, SDKLoadSpec{Endpoint: tgt.endpoint, Canned: tgt.canned, Op: CeilingGet, Ops: 200, Warmup: CeilingWorkers})
		if err != nil {
			t.Fatalf("%s: %v", tgt.name, err)
		}
		p, err := runCeilingPhase(l, tgt)
		if err != nil {
			t.Fatalf("%s: %v", tgt.name, err)
		}
		if p.load.Summary.Requests != 200 || p.load.Summary.Errors != 0 || p.serverCPU <= 0 || p.load.ClientCPU <= 0 {
			t.Fatalf("%s: %d requests, %d errors, server CPU %v, client CPU %v", tgt.name, p.load.Summary.Requests, p.load.Summary.Errors, p.serverCPU, p.load.ClientCPU)
		}
		phases[tgt.name] = append(phases[tgt.name], p)
	}
	noopM, refM := meansOf(phases[ceilingNoop]), meansOf(phases["reference-http"])
	if refM.answerBytes == 0 || math.Abs(noopM.answerBytes/refM.answerBytes-1) > maxAnswerSizeDrift {
		t.Fatalf("answer bytes per get: do-nothing %.1f, reference %.1f", noopM.answerBytes, refM.answerBytes)
	}
}

func TestReportFiles(t *testing.T) {
	ok := func(backend, c string, ops, p99 float64) Outcome {
		return Outcome{Result: Result{Backend: backend, Case: c, Family: strings.Split(c, "/")[0], Workers: 8, Steps: 10,
			Summary: Summary{Requests: 10, OpsPerSec: ops, EntitiesPerSec: ops, Latency: Latency{P50: p99 / 2, P99: p99}}}}
	}
	hot := ok("a", "HotPartition/layout=one-partition", 900, 5000)
	hot.Note = HotPartitionNote
	r := &Report{Generated: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Duration: time.Second, Seed: 9,
		Backends: []BackendRun{{Name: "a", Kind: "reference-http"}, {Name: "b", Kind: "azurite"}, {Name: "c", Error: "cannot start <c>"}},
		Outcomes: []Outcome{ok("a", "PointGet/x=1", 20000, 300), ok("b", "PointGet/x=1", 1000, 9000), hot,
			{Result: Result{Backend: "b", Case: "HotPartition/layout=one-partition"}, Error: "wrong result: (p, r) is missing"}}}
	dir := filepath.Join(t.TempDir(), "out")
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	for _, want := range []string{"| PointGet/x=1 | 20,000 |", "| no interval |", "needs 3 or more runs", "not run: cannot start <c>", "(p, r) is missing", "does not throttle", "![throughput"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	var back Report
	js, _ := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err := json.Unmarshal(js, &back); err != nil || len(back.Outcomes) != 4 || back.Outcomes[0].OpsPerSec != 20000 {
		t.Fatalf("bench.json does not round-trip: %v %+v", err, back.Outcomes)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, ReportSVG))
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	rects := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("bench.svg is not well-formed XML: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	// background + 2 legend swatches + 2 panels × 3 bars
	if rects != 1+2+2*3 {
		t.Errorf("bench.svg has %d rects, want %d", rects, 1+2+2*3)
	}
	if !strings.Contains(string(svg), "failed") {
		t.Error("bench.svg does not mark the failed run")
	}
}

package bench

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
)

// Sizes of the design guide's workloads.
const (
	guideEmployees      = 2000
	guideLargeEmployees = 20000
	guideLogEntries     = 4000
	guideLogLarge       = 40000
	logTailTop          = 20
	seriesEmployees     = 200
	accessEmployees     = 500
)

// HotPartitionNote is printed with the prepend/append anti-pattern's results.
const HotPartitionNote = "A backend that keeps everything in memory (the reference, Azurite) does not throttle: " +
	"one hot partition costs it nothing, so both layouts run alike there. Azure Storage serves up to 2,000 " +
	"entities/s per partition and answers 503 ServerBusy beyond (EVIDENCE.md 9); only a real service shows the anti-pattern."

// GuideCases returns the design guide's workloads
// (https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-guide):
// secondary-index lookups against a property filter, the log tail, the data series against
// one entity per hour, the prepend/append anti-pattern against the same writes spread over
// partitions, and one lookup done as a point query, a partition scan and a table scan.
func GuideCases(large bool) []Case {
	employees := guideEmployees
	logs := guideLogEntries
	if large {
		employees, logs = guideLargeEmployees, guideLogLarge
	}
	guide := []string{"guide"}
	emp := fmt.Sprint(employees)
	return []Case{
		{Family: "SecondaryIndex", Params: []Param{{"employees", emp}, {"lookup", "index-entity"}}, Tags: guide,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupSecondaryIndex(ctx, env, table, quick(env, employees), true)
			}},
		{Family: "SecondaryIndex", Params: []Param{{"employees", emp}, {"lookup", "property-filter"}}, Tags: guide,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupSecondaryIndex(ctx, env, table, quick(env, employees), false)
			}},
		{Family: "LogTail", Params: []Param{{"entries", fmt.Sprint(logs)}, {"top", fmt.Sprint(logTailTop)}}, Tags: guide,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupLogTail(ctx, env, table, quick(env, logs))
			}},
		{Family: "DataSeries", Params: []Param{{"layout", "series-entity"}}, Tags: guide,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupDataSeries(ctx, env, table, true)
			}},
		{Family: "DataSeries", Params: []Param{{"layout", "entity-per-hour"}}, Tags: guide,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupDataSeries(ctx, env, table, false)
			}},
		{Family: "HotPartition", Params: []Param{{"layout", "one-partition"}}, Tags: guide, Workers: 16, Note: HotPartitionNote,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupAccessEvents(ctx, env, table, true)
			}},
		{Family: "HotPartition", Params: []Param{{"layout", "spread"}}, Tags: guide, Workers: 16, Note: HotPartitionNote,
			setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
				return setupAccessEvents(ctx, env, table, false)
			}},
		lookupCase("point", employees),
		lookupCase("partition-scan", employees),
		lookupCase("table-scan", employees),
	}
}

// quick returns n, or a tenth of it for a quick run.
func quick(env *Env, n int) int {
	if env.Quick {
		return max(n/10, 20)
	}
	return n
}

// loadEntities inserts es, grouped by partition in order of first appearance.
func loadEntities(ctx context.Context, b api.Backend, table string, es []api.Entity) error {
	var order []string
	byPK := map[string][]api.Entity{}
	for _, e := range es {
		if _, ok := byPK[e.PartitionKey]; !ok {
			order = append(order, e.PartitionKey)
		}
		byPK[e.PartitionKey] = append(byPK[e.PartitionKey], e)
	}
	return loadPartitions(ctx, b, table, len(order), func(p int) []api.Entity { return byPK[order[p]] })
}

func checkEmployee(e api.Entity, want fixtures.Employee, rk string) error {
	if e.PartitionKey != want.Department || e.RowKey != rk {
		return wrong("looked up (%s, %s), got (%s, %s)", want.Department, rk, e.PartitionKey, e.RowKey)
	}
	if got := fixtures.EmployeeOf(e); got != want {
		return wrong("looked up employee %s (%s), got %+v", want.ID, want.Email, got)
	}
	return nil
}

// setupSecondaryIndex loads employees in the intra-partition secondary index layout
// (index entities "empid_<id>" and "email_<address>" in the department's partition) and
// looks employees up by e-mail address through the index entity, or in the base layout
// (RowKey the id) with a partition scan filtered on the Email property.
func setupSecondaryIndex(ctx context.Context, env *Env, table string, n int, index bool) (*workload, error) {
	recs := fixtures.EmployeeRecords(n)
	var es []api.Entity
	for _, r := range recs {
		if index {
			es = append(es, api.NewEntity(r.Department, "empid_"+r.ID, r.Properties()), api.NewEntity(r.Department, "email_"+r.Email, r.Properties()))
		} else {
			es = append(es, r.Entity())
		}
	}
	if err := loadEntities(ctx, env.Backend, table, es); err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		r := recs[w.Rand.IntN(len(recs))]
		if index {
			e, err := w.B.GetEntity(w.Ctx, w.Table, r.Department, "email_"+r.Email, nil)
			if err != nil {
				return err
			}
			return checkEmployee(e, r, "email_"+r.Email)
		}
		q := api.Query{Filter: fmt.Sprintf("PartitionKey eq %s and %s eq %s", quote(r.Department), fixtures.PropEmail, quote(r.Email))}
		found, _, err := scanAll(w.Ctx, w.B, w.Table, q, 100)
		if err != nil {
			return err
		}
		if len(found) != 1 {
			return wrong("filter %q found %d employees, want 1", q.Filter, len(found))
		}
		return checkEmployee(found[0], r, r.ID)
	}}, nil
}

// setupLogTail loads log messages in the log tail layout (PartitionKey the source, RowKey
// inverted ticks: newest first) and reads the newest logTailTop messages of a source.
func setupLogTail(ctx context.Context, env *Env, table string, n int) (*workload, error) {
	recs := fixtures.LogRecords(n)
	bySource := map[string][]fixtures.LogEntry{}
	es := make([]api.Entity, len(recs))
	for i, r := range recs {
		es[i] = r.TailEntity()
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	var sources []string
	newest := map[string][]string{} // the expected RowKeys of each source's tail
	for s, rs := range bySource {
		sources = append(sources, s)
		sort.Slice(rs, func(i, j int) bool { return rs[i].LoggedAt.After(rs[j].LoggedAt) })
		for _, r := range rs[:min(logTailTop, len(rs))] {
			newest[s] = append(newest[s], r.TailEntity().RowKey)
		}
	}
	sort.Strings(sources)
	if err := loadEntities(ctx, env.Backend, table, es); err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		s := sources[w.Rand.IntN(len(sources))]
		page, err := w.B.QueryEntities(w.Ctx, w.Table, api.Query{Filter: "PartitionKey eq " + quote(s), Top: api.OptionalTop(logTailTop)})
		if err != nil {
			return err
		}
		want := newest[s]
		if len(page.Entities) != len(want) {
			return wrong("the tail of %s has %d messages, want %d", s, len(page.Entities), len(want))
		}
		var prev time.Time
		for i, e := range page.Entities {
			if e.PartitionKey != s || e.RowKey != want[i] {
				return wrong("message %d of the tail of %s is (%s, %s), want (%s, %s)", i, s, e.PartitionKey, e.RowKey, s, want[i])
			}
			at := e.Properties[fixtures.PropLoggedAt].Time()
			if i > 0 && at.After(prev) {
				return wrong("the tail of %s is not newest first: %s after %s", s, at, prev)
			}
			prev = at
		}
		return nil
	}}, nil
}

// setupDataSeries loads message statistics as one series entity per employee (24 hourly
// properties) or as 24 entities per employee, and reads one employee's day.
func setupDataSeries(ctx context.Context, env *Env, table string, series bool) (*workload, error) {
	n := quick(env, seriesEmployees)
	ids := fixtures.StatsEmployees(n)
	var es []api.Entity
	if series {
		es = fixtures.MessageStatsSeries(n)
	} else {
		es = fixtures.MessageStatsPerHour(n)
	}
	if err := loadEntities(ctx, env.Backend, table, es); err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		id := ids[w.Rand.IntN(len(ids))]
		want := fixtures.HourlyMessageCounts(id)
		if series {
			e, err := w.B.GetEntity(w.Ctx, w.Table, id, fixtures.StatsDay, nil)
			if err != nil {
				return err
			}
			for h, c := range want {
				if v := e.Properties[fixtures.HourProperty(h)]; v.Type != api.EdmInt32 || v.Int() != int64(c) {
					return wrong("series of %s: %s is %v, want %d", id, fixtures.HourProperty(h), v, c)
				}
			}
			return nil
		}
		got, _, err := scanAll(w.Ctx, w.B, w.Table, api.Query{Filter: "PartitionKey eq " + quote(id)}, 10)
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return wrong("%s has %d hourly entities, want %d", id, len(got), len(want))
		}
		for h, e := range got {
			if e.RowKey != fixtures.HourRowKey(h) || e.Properties[fixtures.PropMessageCount].Int() != int64(want[h]) {
				return wrong("hour %d of %s reads as %s, want count %d", h, id, e, want[h])
			}
		}
		return nil
	}}, nil
}

// setupAccessEvents appends access events as they happen: in the anti-pattern's layout
// every write of an hour goes to one partition; in the alternative they spread over the
// employees' partitions.
func setupAccessEvents(_ context.Context, _ *Env, _ string, hot bool) (*workload, error) {
	emps := fixtures.EmployeeRecords(accessEmployees)
	resources := []string{"vpn", "mail", "wiki", "fileshare", "crm", "build"}
	var seq atomic.Int64
	return &workload{step: func(w *Worker) error {
		n := seq.Add(1)
		emp := emps[w.Rand.IntN(len(emps))]
		ev := fixtures.AccessEvent{Department: emp.Department, EmployeeID: emp.ID,
			At: fixtures.AccessEpoch.Add(time.Duration(n) * 100 * time.Millisecond), EventID: fmt.Sprintf("%010d", n),
			Resource: resources[w.Rand.IntN(len(resources))]}
		e := ev.SpreadEntity()
		if hot {
			e = ev.HotEntity()
		}
		out, err := w.B.InsertEntity(w.Ctx, w.Table, e)
		if err != nil {
			return err
		}
		if out.PartitionKey != e.PartitionKey || out.RowKey != e.RowKey {
			return wrong("insert of (%s, %s) returned (%s, %s)", e.PartitionKey, e.RowKey, out.PartitionKey, out.RowKey)
		}
		w.later(readBack(w.Table, e.PartitionKey, e.RowKey, func(got api.Entity) error {
			if got.Properties[fixtures.PropEmployeeID].Str != emp.ID || got.Properties[fixtures.PropResource].Str != ev.Resource {
				return wrong("access event (%s, %s) reads back as %s", e.PartitionKey, e.RowKey, got)
			}
			return nil
		}))
		return nil
	}}, nil
}

// lookupCase finds one employee by id: as a point query (PartitionKey and RowKey), as a
// partition scan (the department and a filter on the EmployeeId property) and as a table
// scan (the filter alone), the guide's order of query efficiency
// (https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-guide#design-for-querying).
func lookupCase(style string, n int) Case {
	return Case{Family: "Lookup", Params: []Param{{"employees", fmt.Sprint(n)}, {"style", style}}, Tags: []string{"guide"},
		setup: func(ctx context.Context, env *Env, table string) (*workload, error) {
			recs := fixtures.EmployeeRecords(quick(env, n))
			es := make([]api.Entity, len(recs))
			for i, r := range recs {
				es[i] = r.Entity()
			}
			if err := loadEntities(ctx, env.Backend, table, es); err != nil {
				return nil, err
			}
			return &workload{step: func(w *Worker) error {
				r := recs[w.Rand.IntN(len(recs))]
				if style == "point" {
					e, err := w.B.GetEntity(w.Ctx, w.Table, r.Department, r.ID, nil)
					if err != nil {
						return err
					}
					return checkEmployee(e, r, r.ID)
				}
				filter := fmt.Sprintf("%s eq %s", fixtures.PropEmployeeID, quote(r.ID))
				if style == "partition-scan" {
					filter = fmt.Sprintf("PartitionKey eq %s and %s", quote(r.Department), filter)
				}
				found, _, err := scanAll(w.Ctx, w.B, w.Table, api.Query{Filter: filter}, len(recs)+10)
				if err != nil {
					return err
				}
				if len(found) != 1 {
					return wrong("filter %q found %d employees, want 1", filter, len(found))
				}
				return checkEmployee(found[0], r, r.ID)
			}}, nil
		}}
}

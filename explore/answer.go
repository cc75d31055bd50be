package explore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Answer is what one backend answered to one operation, reduced to what a client may rely
// on: the error's status and code (and failed batch index), or what a success carried, one
// line each (entities in order with keys, property types and values; whether an ETag came
// back; the continuation's presence). Timestamps and the ETags' values are left out.
type Answer struct {
	// Error is "STATUS CODE" (with " at operation N" for a batch), empty on success.
	Error string `json:"error,omitempty"`
	// Status and Code are the error's, for matching against the catalogue.
	Status int      `json:"status,omitempty"`
	Code   string   `json:"code,omitempty"`
	Lines  []string `json:"lines,omitempty"`
}

// Text is the answer in one line for scripts and reports.
func (a Answer) Text() string {
	if a.Error != "" {
		return "error " + a.Error
	}
	if len(a.Lines) == 0 {
		return "ok"
	}
	return "ok: " + strings.Join(a.Lines, "; ")
}

func (a Answer) equal(b Answer) bool {
	if a.Error != b.Error || len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		if a.Lines[i] != b.Lines[i] {
			return false
		}
	}
	return true
}

// errUnanswered marks a call that got no answer a client could use: a transport fault, a
// transient answer that persisted, a request the driver cannot send. A sequence that meets
// one ends without a verdict: it is never a difference.
var errUnanswered = errors.New("no answer")

// errorAnswer turns a call's error into an Answer, or errUnanswered.
func errorAnswer(ctx context.Context, err error) (Answer, error) {
	if e, ok := driver.AsError(err); ok {
		if driver.Retryable(ctx, err) && !driver.ServerFault(err) {
			return Answer{}, fmt.Errorf("%w: %v", errUnanswered, err)
		}
		a := Answer{Status: e.Status, Code: e.Code, Error: fmt.Sprintf("%d %s", e.Status, e.Code)}
		if e.Indexed {
			a.Error += " at operation " + strconv.Itoa(e.FailedIndex)
		}
		return a, nil
	}
	if m, ok := driver.AsMalformed(err); ok {
		return Answer{Status: m.Status, Code: "malformed", Error: fmt.Sprintf("%d unreadable answer", m.Status)}, nil
	}
	return Answer{}, fmt.Errorf("%w: %v", errUnanswered, err)
}

// entityLine renders an entity's keys and properties exactly (long strings by length and
// hash), with the system properties an answer left out and whether it carried an ETag.
func entityLine(e api.Entity) string {
	var b strings.Builder
	b.WriteString("(")
	if e.Absent&api.AbsentPartitionKey == 0 {
		fmt.Fprintf(&b, "PartitionKey=%s", exactString(e.PartitionKey))
	} else {
		b.WriteString("PartitionKey absent")
	}
	if e.Absent&api.AbsentRowKey == 0 {
		fmt.Fprintf(&b, ", RowKey=%s", exactString(e.RowKey))
	} else {
		b.WriteString(", RowKey absent")
	}
	if e.Absent&api.AbsentTimestamp != 0 {
		b.WriteString(", Timestamp absent")
	} else if e.Timestamp.IsZero() {
		b.WriteString(", no Timestamp")
	}
	names := e.PropertyNames()
	for _, n := range names {
		fmt.Fprintf(&b, ", %s=%s", exactString(n), exactValue(e.Properties[n]))
	}
	b.WriteString(")")
	return b.String()
}

func exactString(s string) string {
	if len(s) <= 40 {
		return strconv.QuoteToASCII(s)
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%s...(%d bytes, fnv %016x)", strconv.QuoteToASCII(s[:16]), len(s), h.Sum64())
}

func exactValue(v api.Value) string {
	if v.Null {
		return v.Type.String() + "(null)"
	}
	switch v.Type {
	case api.EdmString, api.EdmGuid, api.EdmBinary:
		return v.Type.String() + "(" + exactString(v.Str) + ")"
	case api.EdmDouble:
		f := v.Float()
		if math.IsNaN(f) {
			return "Edm.Double(NaN)"
		}
		if f == 0 {
			f = 0 // -0 equals 0 (api.Value.Equal)
		}
		return "Edm.Double(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	case api.EdmDateTime:
		return "Edm.DateTime(" + strconv.FormatInt(v.DateTimeTicks(), 10) + " ticks)"
	}
	return v.String()
}

// Side is one backend as a sequence sees it: its own table names and the ETags it answered.
type Side struct {
	Backend api.Backend
	// Tables are the names of the sequence's tables on this backend, by index.
	Tables []string
	etags  map[etagKey][]string
}

type etagKey struct {
	table  int
	pk, rk string
}

// neverAnswered is an ETag of the service's form that no backend has answered: what
// "current" sends for an entity whose ETag is unknown and "stale" for one with one ETag.
const neverAnswered = `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`

func (s *Side) learn(table int, e api.Entity) {
	if e.ETag == "" || e.Absent&(api.AbsentPartitionKey|api.AbsentRowKey) != 0 {
		return
	}
	s.learnETag(table, e.PartitionKey, e.RowKey, e.ETag)
}

func (s *Side) learnETag(table int, pk, rk, etag string) {
	if etag == "" {
		return
	}
	k := etagKey{table, pk, rk}
	list := s.etags[k]
	if len(list) > 0 && list[len(list)-1] == etag {
		return
	}
	s.etags[k] = append(list, etag)
}

func (s *Side) ifMatch(table int, pk, rk string, r gen.ETagRef) string {
	list := s.etags[etagKey{table, pk, rk}]
	switch r {
	case gen.MatchCurrent:
		if len(list) == 0 {
			return neverAnswered
		}
		return list[len(list)-1]
	case gen.MatchStale:
		if len(list) < 2 {
			return neverAnswered
		}
		return list[0]
	}
	return string(r)
}

// tableIndex maps a backend's table name back to the sequence's index (-1 for another's).
func (s *Side) tableIndex(name string) int {
	for i, n := range s.Tables {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// do runs op on the side and returns its answer.
func (s *Side) do(ctx context.Context, op gen.Op) (Answer, error) {
	b := s.Backend
	table := s.Tables[op.Table]
	fail := func(err error) (Answer, error) { return errorAnswer(ctx, err) }
	switch op.Kind {
	case gen.CreateTable:
		if err := b.CreateTable(ctx, table); err != nil {
			return fail(err)
		}
		return Answer{}, nil
	case gen.DeleteTable:
		if err := b.DeleteTable(ctx, table); err != nil {
			return fail(err)
		}
		for k := range s.etags {
			if k.table == op.Table {
				delete(s.etags, k)
			}
		}
		return Answer{}, nil
	case gen.ListTables:
		return s.listTables(ctx)
	case gen.Insert:
		got, err := b.InsertEntity(ctx, table, op.Entity)
		if err != nil {
			return fail(err)
		}
		s.learn(op.Table, got)
		return Answer{Lines: []string{"returned " + entityLine(got), etagPresence(got.ETag)}}, nil
	case gen.Upsert, gen.Update:
		ifMatch := ""
		if op.Kind == gen.Update {
			ifMatch = s.ifMatch(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, op.IfMatch)
		}
		etag, err := b.UpdateEntity(ctx, table, op.Entity, op.Mode, ifMatch)
		if err != nil {
			return fail(err)
		}
		a := Answer{Lines: []string{etagPresence(etag)}}
		if change := s.etagChange(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, etag); change != "" {
			a.Lines = append(a.Lines, change)
		}
		s.learnETag(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, etag)
		return a, nil
	case gen.Delete:
		ifMatch := s.ifMatch(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, op.IfMatch)
		if err := b.DeleteEntity(ctx, table, op.Entity.PartitionKey, op.Entity.RowKey, ifMatch); err != nil {
			return fail(err)
		}
		return Answer{}, nil
	case gen.Get:
		got, err := b.GetEntity(ctx, table, op.Entity.PartitionKey, op.Entity.RowKey, op.Select)
		if err != nil {
			return fail(err)
		}
		a := Answer{Lines: []string{entityLine(got), etagPresence(got.ETag)}}
		if change := s.etagChange(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, got.ETag); change != "" {
			a.Lines = append(a.Lines, "since the last answer: "+change)
		}
		s.learnETag(op.Table, op.Entity.PartitionKey, op.Entity.RowKey, got.ETag)
		return a, nil
	case gen.Query:
		return s.query(ctx, op.Table, op.Query)
	case gen.Batch:
		return s.batch(ctx, op)
	}
	return Answer{}, fmt.Errorf("%w: unknown operation %q", errUnanswered, op.Kind)
}

// etagPresence says whether an answer carried an ETag, and in which form (the service's
// are weak: W/"...").
func etagPresence(etag string) string {
	switch {
	case etag == "":
		return "no ETag"
	case strings.HasPrefix(etag, "W/"):
		return "ETag"
	}
	return "strong ETag"
}

// etagChange says whether a write's new ETag differs from the one the entity had before,
// when one was known.
func (s *Side) etagChange(table int, pk, rk, etag string) string {
	list := s.etags[etagKey{table, pk, rk}]
	switch {
	case etag == "" || len(list) == 0:
		return ""
	case list[len(list)-1] == etag:
		return "the ETag did not change"
	}
	return "a new ETag"
}

func (s *Side) query(ctx context.Context, table int, q gen.QuerySpec) (Answer, error) {
	var a Answer
	req := api.Query{Filter: q.Filter, Top: q.Top, Select: q.Select}
	for page := 1; page <= max(q.Pages, 1); page++ {
		p, err := s.Backend.QueryEntities(ctx, s.Tables[table], req)
		if err != nil {
			if page == 1 {
				return errorAnswer(ctx, err)
			}
			e, uerr := errorAnswer(ctx, err)
			if uerr != nil {
				return e, uerr
			}
			a.Lines = append(a.Lines, fmt.Sprintf("page %d: error %s", page, e.Error))
			a.Status, a.Code = e.Status, e.Code
			return a, nil
		}
		line := fmt.Sprintf("page %d: %d entities", page, len(p.Entities))
		a.Lines = append(a.Lines, line)
		for _, e := range p.Entities {
			s.learn(table, e)
			a.Lines = append(a.Lines, "  "+entityLine(e))
		}
		if p.Continuation.IsZero() {
			a.Lines = append(a.Lines, fmt.Sprintf("page %d: no continuation", page))
			return a, nil
		}
		a.Lines = append(a.Lines, fmt.Sprintf("page %d: continuation", page))
		req.Continuation = p.Continuation
	}
	return a, nil
}

func (s *Side) listTables(ctx context.Context) (Answer, error) {
	var names []string
	q := api.TableQuery{}
	for range 100 {
		p, err := s.Backend.QueryTables(ctx, q)
		if err != nil {
			return errorAnswer(ctx, err)
		}
		for _, n := range p.Tables {
			if i := s.tableIndex(n); i >= 0 {
				names = append(names, "t"+strconv.Itoa(i))
			}
		}
		if p.NextTableName == "" {
			break
		}
		q.NextTableName = p.NextTableName
	}
	sort.Strings(names)
	return Answer{Lines: []string{"tables: " + strings.Join(names, ",")}}, nil
}

func (s *Side) batch(ctx context.Context, op gen.Op) (Answer, error) {
	ops := make([]api.BatchOp, len(op.Steps))
	for i, st := range op.Steps {
		ops[i] = api.BatchOp{Kind: st.Kind, Entity: st.Entity}
		switch st.Kind {
		case api.BatchReplace, api.BatchMerge, api.BatchDelete:
			ops[i].IfMatch = s.ifMatch(op.Table, st.Entity.PartitionKey, st.Entity.RowKey, st.IfMatch)
		}
	}
	results, err := s.Backend.SubmitBatch(ctx, s.Tables[op.Table], ops)
	if err != nil {
		return errorAnswer(ctx, err)
	}
	a := Answer{Lines: []string{fmt.Sprintf("%d results", len(results))}}
	for i, r := range results {
		line := fmt.Sprintf("result %d: %d %s", i, r.Status, etagPresence(r.ETag))
		if r.Entity != nil {
			line += " " + entityLine(*r.Entity)
			s.learn(op.Table, *r.Entity)
		}
		if i < len(op.Steps) && op.Steps[i].Kind != api.BatchRetrieve && op.Steps[i].Kind != api.BatchDelete {
			s.learnETag(op.Table, op.Steps[i].Entity.PartitionKey, op.Steps[i].Entity.RowKey, r.ETag)
		}
		a.Lines = append(a.Lines, line)
	}
	return a, nil
}

// readBack reads every entity of every table of the sequence, in the order the backend
// answers them, following continuations: what the tables hold.
func (s *Side) readBack(ctx context.Context) (Answer, error) {
	var a Answer
	for i, name := range s.Tables {
		req := api.Query{}
		for pages := 0; ; pages++ {
			if pages > 1000 {
				return Answer{}, fmt.Errorf("%w: reading back t%d did not end after 1000 pages", errUnanswered, i)
			}
			p, err := s.Backend.QueryEntities(ctx, name, req)
			if err != nil {
				e, uerr := errorAnswer(ctx, err)
				if uerr != nil {
					return e, uerr
				}
				a.Lines = append(a.Lines, fmt.Sprintf("t%d: error %s", i, e.Error))
				break
			}
			for _, e := range p.Entities {
				a.Lines = append(a.Lines, fmt.Sprintf("t%d: %s", i, entityLine(e)))
			}
			if p.Continuation.IsZero() {
				break
			}
			req.Continuation = p.Continuation
		}
	}
	return a, nil
}

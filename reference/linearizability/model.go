package linearizability

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/anishathalye/porcupine"
)

// MaxRows is how many rows a partition of the workload has.
const MaxRows = 4

// OpKind is one kind of operation of the workload.
type OpKind int

// The operations the workload performs.
const (
	OpGet     OpKind = iota // Get Entity
	OpInsert                // Insert Entity
	OpReplace               // Update Entity (replace) with If-Match: the ETag, or * when empty
	OpDelete                // Delete Entity with If-Match: the ETag, or * when empty
	OpUpsert                // Insert Or Replace Entity
	OpBatch                 // an entity group transaction of Steps
)

var opNames = [...]string{"get", "insert", "replace", "delete", "upsert", "batch"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("op%d", int(k))
}

// Step is one single-entity operation: a whole operation, or one of a transaction's.
type Step struct {
	Kind  OpKind
	Row   int
	Value int64  // written by insert, replace, upsert
	ETag  string // If-Match of replace and delete ("" means *)
}

// Input is one operation as called.
type Input struct {
	Partition int
	Step             // the operation, unless Kind is OpBatch
	Steps     []Step // the transaction's operations, in order
}

// Output is one operation's answer. OK is success; otherwise Status is the error's HTTP
// status and FailedIndex the failed operation of a transaction (-1 when the answer did
// not say).
type Output struct {
	OK          bool
	Status      int
	FailedIndex int
	Value       int64    // read by get
	ETag        string   // read by get, written by insert, replace, upsert
	ETags       []string // written by each step of a successful transaction ("" for deletes)
}

// cell is one row of the model.
type cell struct {
	Exists bool
	Value  int64
	ETag   string
}

// state is one partition of the model. It is a value: Step copies it.
type state [MaxRows]cell

// apply runs one step on st: ok reports whether the step succeeds; status is the error
// status when it does not; etag is the ETag a successful write produces.
func (st *state) apply(s Step, etag string) (ok bool, status int) {
	c := &st[s.Row]
	switch s.Kind {
	case OpInsert:
		if c.Exists {
			return false, http.StatusConflict
		}
		*c = cell{Exists: true, Value: s.Value, ETag: etag}
	case OpReplace:
		if !c.Exists {
			return false, http.StatusNotFound
		}
		if s.ETag != "" && s.ETag != c.ETag {
			return false, http.StatusPreconditionFailed
		}
		*c = cell{Exists: true, Value: s.Value, ETag: etag}
	case OpDelete:
		if !c.Exists {
			return false, http.StatusNotFound
		}
		if s.ETag != "" && s.ETag != c.ETag {
			return false, http.StatusPreconditionFailed
		}
		*c = cell{}
	case OpUpsert:
		*c = cell{Exists: true, Value: s.Value, ETag: etag}
	default:
		return false, 0
	}
	return true, 0
}

// step is the sequential specification: whether the partition in state st can answer in
// with out, and the state after it.
func step(st state, in Input, out Output) (bool, state) {
	switch in.Kind {
	case OpGet:
		c := st[in.Row]
		if !out.OK {
			return out.Status == http.StatusNotFound && !c.Exists, st
		}
		return c.Exists && c.Value == out.Value && c.ETag == out.ETag, st
	case OpBatch:
		next := st
		for i, s := range in.Steps {
			etag := ""
			if out.OK && i < len(out.ETags) {
				etag = out.ETags[i]
			}
			ok, status := next.apply(s, etag)
			if !ok {
				// The first failure must be the one answered; nothing changes.
				return !out.OK && status == out.Status && (out.FailedIndex < 0 || out.FailedIndex == i), st
			}
		}
		if !out.OK || len(out.ETags) != len(in.Steps) {
			return false, st
		}
		return true, next
	default:
		next := st
		ok, status := next.apply(in.Step, out.ETag)
		if ok != out.OK || (!ok && status != out.Status) {
			return false, st
		}
		return true, next
	}
}

// Model is the porcupine model of the workload: one partition per PartitionKey.
func Model() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byPartition := map[int][]porcupine.Operation{}
			var order []int
			for _, op := range history {
				p := op.Input.(Input).Partition
				if _, seen := byPartition[p]; !seen {
					order = append(order, p)
				}
				byPartition[p] = append(byPartition[p], op)
			}
			out := make([][]porcupine.Operation, 0, len(order))
			for _, p := range order {
				out = append(out, byPartition[p])
			}
			return out
		},
		Init: func() interface{} { return state{} },
		Step: func(s, in, out interface{}) (bool, interface{}) {
			return step(s.(state), in.(Input), out.(Output))
		},
		DescribeOperation: func(in, out interface{}) string { return describe(in.(Input), out.(Output)) },
		DescribeState: func(s interface{}) string {
			var parts []string
			for i, c := range s.(state) {
				if c.Exists {
					parts = append(parts, fmt.Sprintf("r%d=%d@%s", i, c.Value, shortETag(c.ETag)))
				}
			}
			return "{" + strings.Join(parts, ", ") + "}"
		},
	}
}

func shortETag(e string) string {
	e = strings.TrimPrefix(strings.TrimSuffix(e, `"`), `W/"`)
	if len(e) > 10 {
		return "…" + e[len(e)-10:]
	}
	if e == "" {
		return "*"
	}
	return e
}

func describeStep(s Step) string {
	switch s.Kind {
	case OpGet:
		return fmt.Sprintf("get r%d", s.Row)
	case OpDelete:
		return fmt.Sprintf("delete r%d if %s", s.Row, shortETag(s.ETag))
	case OpReplace:
		return fmt.Sprintf("replace r%d=%d if %s", s.Row, s.Value, shortETag(s.ETag))
	}
	return fmt.Sprintf("%s r%d=%d", s.Kind, s.Row, s.Value)
}

func describe(in Input, out Output) string {
	var call string
	if in.Kind == OpBatch {
		parts := make([]string, len(in.Steps))
		for i, s := range in.Steps {
			parts[i] = describeStep(s)
		}
		call = fmt.Sprintf("p%d batch[%s]", in.Partition, strings.Join(parts, "; "))
	} else {
		call = fmt.Sprintf("p%d %s", in.Partition, describeStep(in.Step))
	}
	switch {
	case !out.OK && out.FailedIndex >= 0:
		return fmt.Sprintf("%s -> %d at %d", call, out.Status, out.FailedIndex)
	case !out.OK:
		return fmt.Sprintf("%s -> %d", call, out.Status)
	case in.Kind == OpGet:
		return fmt.Sprintf("%s -> %d@%s", call, out.Value, shortETag(out.ETag))
	case in.Kind == OpBatch:
		return call + " -> ok"
	}
	return fmt.Sprintf("%s -> ok @%s", call, shortETag(out.ETag))
}

package gen

import (
	"fmt"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

// Kind is the kind of one operation of a sequence.
type Kind string

// The operations a sequence is made of.
const (
	CreateTable Kind = "create-table"
	DeleteTable Kind = "delete-table"
	ListTables  Kind = "list-tables"
	Insert      Kind = "insert"
	Upsert      Kind = "upsert"
	Update      Kind = "update"
	Delete      Kind = "delete"
	Get         Kind = "get"
	Query       Kind = "query"
	Batch       Kind = "batch"
)

// ETagRef names the If-Match an operation sends by what it refers to, so that one sequence
// means the same on two backends whose ETags differ. The runner resolves it against the
// ETags each backend has answered.
type ETagRef string

// The If-Match choices.
const (
	// MatchAny sends "*".
	MatchAny ETagRef = "*"
	// MatchCurrent sends the ETag last answered for the entity (a stale-looking one when
	// none was).
	MatchCurrent ETagRef = "current"
	// MatchStale sends the first ETag answered for the entity when another came after it,
	// else one no backend has answered.
	MatchStale ETagRef = "stale"
	// MatchNone sends no If-Match: an upsert for Upsert, a refused delete for Delete.
	MatchNone ETagRef = ""
)

// QuerySpec is a Query Entities request and how far to follow it.
type QuerySpec struct {
	Filter string
	Top    api.Top
	Select []string
	// Pages is the most pages to read by following continuations (at least 1).
	Pages int
}

// Step is one operation of a batch.
type Step struct {
	Kind    api.BatchOpKind
	Entity  api.Entity
	IfMatch ETagRef
}

// Op is one operation of a sequence. Table is the index of the sequence's table it acts on.
type Op struct {
	Kind    Kind
	Table   int
	Entity  api.Entity
	Mode    api.UpdateMode
	IfMatch ETagRef
	Select  []string
	Query   QuerySpec
	Steps   []Step
}

// Writes reports whether op may change what a table holds.
func (op Op) Writes() bool {
	switch op.Kind {
	case Insert, Upsert, Update, Delete, Batch, CreateTable, DeleteTable:
		return true
	}
	return false
}

// String is the operation as one line of a script, e.g.
// `t0 merge (PartitionKey="p", RowKey="r", A=Edm.Int32(1)) if-match current`.
func (op Op) String() string {
	t := fmt.Sprintf("t%d ", op.Table)
	switch op.Kind {
	case CreateTable, DeleteTable:
		return t + string(op.Kind)
	case ListTables:
		return "list-tables"
	case Insert:
		return t + "insert " + op.Entity.String()
	case Upsert:
		return t + "upsert-" + op.Mode.String() + " " + op.Entity.String()
	case Update:
		return t + op.Mode.String() + " " + op.Entity.String() + " if-match " + ifMatchText(op.IfMatch)
	case Delete:
		return fmt.Sprintf("%sdelete (PartitionKey=%q, RowKey=%q) if-match %s", t, op.Entity.PartitionKey, op.Entity.RowKey, ifMatchText(op.IfMatch))
	case Get:
		s := fmt.Sprintf("%sget (PartitionKey=%q, RowKey=%q)", t, op.Entity.PartitionKey, op.Entity.RowKey)
		if op.Select != nil {
			s += " $select=" + strings.Join(op.Select, ",")
		}
		return s
	case Query:
		return t + "query " + op.Query.String()
	case Batch:
		parts := make([]string, len(op.Steps))
		for i, s := range op.Steps {
			parts[i] = s.String()
		}
		return t + "batch [" + strings.Join(parts, "; ") + "]"
	}
	return t + string(op.Kind)
}

// String is the step as it appears inside a batch line.
func (s Step) String() string {
	switch s.Kind {
	case api.BatchDelete, api.BatchRetrieve:
		line := fmt.Sprintf("%s (PartitionKey=%q, RowKey=%q)", s.Kind, s.Entity.PartitionKey, s.Entity.RowKey)
		if s.Kind == api.BatchDelete {
			line += " if-match " + ifMatchText(s.IfMatch)
		}
		return line
	case api.BatchReplace, api.BatchMerge:
		return s.Kind.String() + " " + s.Entity.String() + " if-match " + ifMatchText(s.IfMatch)
	}
	return s.Kind.String() + " " + s.Entity.String()
}

// String is the query's options, e.g. `$filter=A gt 1 $top=2 $select=A pages<=3`.
func (q QuerySpec) String() string {
	var parts []string
	if q.Filter != "" {
		parts = append(parts, "$filter="+q.Filter)
	}
	if q.Top.IsSet() {
		parts = append(parts, "$top="+q.Top.String())
	}
	if q.Select != nil {
		parts = append(parts, "$select="+strings.Join(q.Select, ","))
	}
	parts = append(parts, fmt.Sprintf("pages<=%d", q.Pages))
	return strings.Join(parts, " ")
}

func ifMatchText(r ETagRef) string {
	if r == MatchNone {
		return "none"
	}
	return string(r)
}

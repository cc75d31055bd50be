package api

import "strconv"

// Query is one request of Query Entities. The caller re-sends Filter, Select and Top with
// every continuation (EVIDENCE.md 3.5).
type Query struct {
	// Filter is the raw OData $filter expression; empty sends none.
	Filter string
	// Top is $top: at most this many entities in this page. The zero value sends no $top;
	// TopOf(0) sends $top=0, which Storage answers with an empty page (EVIDENCE.md 13,
	// E-top-zero). Values outside 0..1000 are sent as they are so that specs can probe the
	// limit.
	Top Top
	// Select lists the $select properties; nil sends none (all properties come back).
	Select []string
	// Continuation resumes a query; the zero value starts from the beginning.
	Continuation Continuation
}

// Top is the $top of a query: absent (the zero value) or a number.
type Top struct {
	n   int
	set bool
}

// TopOf returns the $top n.
func TopOf(n int) Top { return Top{n: n, set: true} }

// OptionalTop is TopOf(n) for n other than 0, and no $top for 0: for callers whose 0 means
// "no $top".
func OptionalTop(n int) Top {
	if n == 0 {
		return Top{}
	}
	return TopOf(n)
}

// Value returns the number and whether $top is present.
func (t Top) Value() (int, bool) { return t.n, t.set }

// IsSet reports whether $top is present.
func (t Top) IsSet() bool { return t.set }

// String is the number, or "none" when $top is absent.
func (t Top) String() string {
	if !t.set {
		return "none"
	}
	return strconv.Itoa(t.n)
}

// Continuation is the opaque position of the next page of a query
// (x-ms-continuation-NextPartitionKey / NextRowKey). Its zero value means none.
type Continuation struct {
	NextPartitionKey string
	NextRowKey       string
}

// IsZero reports whether c is empty, i.e. the query has no more pages.
func (c Continuation) IsZero() bool { return c.NextPartitionKey == "" && c.NextRowKey == "" }

// Page is one page of Query Entities results.
type Page struct {
	Entities     []Entity
	Continuation Continuation
}

// TableQuery is one request of Query Tables.
type TableQuery struct {
	Filter        string
	Top           int
	NextTableName string
}

// TablePage is one page of Query Tables results. NextTableName is empty on the last page.
type TablePage struct {
	Tables        []string
	NextTableName string
}

// UpdateMode chooses between Update Entity (replace) and Merge Entity.
type UpdateMode int

const (
	// Replace replaces the whole entity; properties not sent are removed.
	Replace UpdateMode = iota
	// Merge keeps properties not sent and ignores null values.
	Merge
)

func (m UpdateMode) String() string {
	if m == Merge {
		return "merge"
	}
	return "replace"
}

// IfMatchAny is the If-Match value that matches any existing entity.
const IfMatchAny = "*"

// BatchOpKind is the kind of one operation of an entity group transaction.
type BatchOpKind int

// The operations an entity group transaction may hold (EVIDENCE.md 4).
const (
	BatchInsert BatchOpKind = iota
	BatchReplace
	BatchMerge
	BatchInsertOrReplace
	BatchInsertOrMerge
	BatchDelete
	BatchRetrieve
)

var batchOpNames = [...]string{"insert", "replace", "merge", "insert-or-replace", "insert-or-merge", "delete", "retrieve"}

func (k BatchOpKind) String() string {
	if int(k) < len(batchOpNames) {
		return batchOpNames[k]
	}
	return "unknown"
}

// BatchOp is one operation of an entity group transaction. Delete and Retrieve use only
// the entity's keys. Replace, Merge and Delete are conditional: an empty IfMatch is sent as
// "*" (an update inside a batch never silently becomes an upsert; see EVIDENCE.md 12 #8).
type BatchOp struct {
	Kind    BatchOpKind
	Entity  Entity
	IfMatch string
}

// BatchResult is the outcome of one operation of a successful transaction, in request order.
type BatchResult struct {
	Status int
	ETag   string
	// Entity holds the entity of a Retrieve.
	Entity *Entity
}

package api

import "context"

// Backend is the Azure Table API as conform drives it: the one interface that every
// implementation under test, the reference and every decorator satisfy.
//
// Contract, shared by all implementations:
//   - Service failures are returned as *spec.Error (status, code, message, request id,
//     failed batch index). Any other error is a transport or protocol failure: the answer
//     could not be had or could not be understood.
//   - Entities returned are the caller's to keep; entities passed in are not retained.
//   - Every method honours ctx cancellation and deadline.
//   - Methods are safe for concurrent use.
type Backend interface {
	// CreateTable creates a table (201). An existing name fails with 409 TableAlreadyExists.
	CreateTable(ctx context.Context, name string) error
	// DeleteTable deletes a table (204).
	DeleteTable(ctx context.Context, name string) error
	// QueryTables lists tables, one page at a time.
	QueryTables(ctx context.Context, q TableQuery) (TablePage, error)

	// InsertEntity inserts e and returns the stored entity with its Timestamp and ETag.
	InsertEntity(ctx context.Context, table string, e Entity) (Entity, error)
	// UpdateEntity replaces or merges e. ifMatch is an ETag, "*" for any, or "" for an
	// upsert (Insert Or Replace / Insert Or Merge). It returns the new ETag.
	UpdateEntity(ctx context.Context, table string, e Entity, mode UpdateMode, ifMatch string) (string, error)
	// DeleteEntity deletes one entity. ifMatch is an ETag or "*"; "" sends no If-Match
	// header, which the service refuses.
	DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) error
	// GetEntity reads one entity; sel, when non-nil, is sent as $select.
	GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (Entity, error)
	// QueryEntities returns one page of a query.
	QueryEntities(ctx context.Context, table string, q Query) (Page, error)
	// SubmitBatch runs an entity group transaction against one table. On failure it returns
	// a *spec.Error whose FailedIndex names the failing operation when the answer says so.
	SubmitBatch(ctx context.Context, table string, ops []BatchOp) ([]BatchResult, error)
}

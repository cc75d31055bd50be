package inproc

import (
	"context"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Backend is the reference Service behind api.Backend.
type Backend struct {
	svc *reference.Service
}

var (
	_ api.Backend      = (*Backend)(nil)
	_ driver.Describer = (*Backend)(nil)
)

// New returns a Backend over a fresh reference Service built with opts.
func New(opts ...reference.Option) *Backend {
	return &Backend{svc: reference.New(opts...)}
}

// Service returns the Service behind b.
func (b *Backend) Service() *reference.Service { return b.svc }

// Info describes the backend for reports: its version is the running conform's, said as
// the report's header says it (buildinfo).
func (b *Backend) Info() driver.Info {
	return driver.Info{Name: "reference", Kind: "reference", Driver: "inproc", Version: "conform " + buildinfo.Current().String()}
}

// CreateTable creates a table.
func (b *Backend) CreateTable(ctx context.Context, name string) error {
	return b.svc.CreateTable(ctx, name)
}

// DeleteTable deletes a table.
func (b *Backend) DeleteTable(ctx context.Context, name string) error {
	return b.svc.DeleteTable(ctx, name)
}

// QueryTables lists one page of tables.
func (b *Backend) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	return b.svc.QueryTables(ctx, q)
}

// InsertEntity inserts a copy of e and returns a copy of what was stored.
func (b *Backend) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := b.svc.InsertEntity(ctx, table, e.Clone())
	if err != nil {
		return api.Entity{}, err
	}
	return got.Clone(), nil
}

// UpdateEntity replaces or merges a copy of e.
func (b *Backend) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return b.svc.UpdateEntity(ctx, table, e.Clone(), mode, ifMatch)
}

// DeleteEntity deletes one entity.
func (b *Backend) DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) error {
	return b.svc.DeleteEntity(ctx, table, partitionKey, rowKey, ifMatch)
}

// GetEntity returns a copy of one entity.
func (b *Backend) GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (api.Entity, error) {
	got, err := b.svc.GetEntity(ctx, table, partitionKey, rowKey, append([]string(nil), sel...))
	if err != nil {
		return api.Entity{}, err
	}
	return got.Clone(), nil
}

// QueryEntities returns a copy of one page of a query.
func (b *Backend) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	q.Select = append([]string(nil), q.Select...)
	page, err := b.svc.QueryEntities(ctx, table, q)
	if err != nil {
		return api.Page{}, err
	}
	for i := range page.Entities {
		page.Entities[i] = page.Entities[i].Clone()
	}
	return page, nil
}

// SubmitBatch runs a transaction over copies of the operations' entities.
func (b *Backend) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	in := make([]api.BatchOp, len(ops))
	for i, op := range ops {
		in[i] = op
		in[i].Entity = op.Entity.Clone()
	}
	results, err := b.svc.SubmitBatch(ctx, table, in)
	if err != nil {
		return nil, err
	}
	for i := range results {
		if e := results[i].Entity; e != nil {
			c := e.Clone()
			results[i].Entity = &c
		}
	}
	return results, nil
}

package mutant

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// failing answers every call after the first `after` with fail instead of the wrapped
// backend's answer.
type failing struct {
	api.Backend
	after int64
	calls atomic.Int64
	fail  func(ctx context.Context, op string) error
}

func (m *failing) broken(ctx context.Context, op string) error {
	if m.calls.Add(1) > m.after {
		return m.fail(ctx, op)
	}
	return nil
}

func (m *failing) CreateTable(ctx context.Context, name string) error {
	if err := m.broken(ctx, "CreateTable"); err != nil {
		return err
	}
	return m.Backend.CreateTable(ctx, name)
}

func (m *failing) DeleteTable(ctx context.Context, name string) error {
	if err := m.broken(ctx, "DeleteTable"); err != nil {
		return err
	}
	return m.Backend.DeleteTable(ctx, name)
}

func (m *failing) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	if err := m.broken(ctx, "QueryTables"); err != nil {
		return api.TablePage{}, err
	}
	return m.Backend.QueryTables(ctx, q)
}

func (m *failing) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if err := m.broken(ctx, "InsertEntity"); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *failing) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := m.broken(ctx, "UpdateEntity"); err != nil {
		return "", err
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *failing) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if err := m.broken(ctx, "DeleteEntity"); err != nil {
		return err
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *failing) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	if err := m.broken(ctx, "GetEntity"); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.GetEntity(ctx, table, pk, rk, sel)
}

func (m *failing) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if err := m.broken(ctx, "QueryEntities"); err != nil {
		return api.Page{}, err
	}
	return m.Backend.QueryEntities(ctx, table, q)
}

func (m *failing) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	if err := m.broken(ctx, "SubmitBatch"); err != nil {
		return nil, err
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

// transportCalls is how many calls the transport mutants answer before they break: enough
// for the first spec to create its table and write.
const transportCalls = 2

var errConnectionReset = errors.New("read: connection reset by peer")

// Transport faults: they test that every spec is bounded by the spec timeout and that a
// dead backend is reported as errors, not as rule failures or a hung run.
var (
	_ = define(Mutant{
		Name:        "hangs-after-calls",
		Description: "stops answering after two calls: every later call waits until its context ends",
		Breaks:      []string{"tables.create.conflict", "modify.insert.conflict"},
		LabelFilter: "tables.create.conflict || modify.insert.conflict",
		SpecTimeout: time.Second,
		Transport:   true,
	}, func(b api.Backend) api.Backend {
		return &failing{Backend: b, after: transportCalls, fail: func(ctx context.Context, op string) error {
			<-ctx.Done()
			return &driver.TransportError{Op: op, Err: ctx.Err()}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "dies-after-calls",
		Description: "drops every connection after two calls",
		Breaks:      []string{"tables.create.conflict", "modify.insert.conflict", "query.point"},
		LabelFilter: "area:tables || area:modification || area:query",
		Transport:   true,
	}, func(b api.Backend) api.Backend {
		return &failing{Backend: b, after: transportCalls, fail: func(_ context.Context, op string) error {
			return &driver.TransportError{Op: op, Err: errConnectionReset}
		}}
	}, hooks{})
)

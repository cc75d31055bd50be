package mutant

import (
	"context"
	"net/http"
	"sort"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// errMapper rewrites every service error a backend answers.
type errMapper struct {
	api.Backend
	fn func(e *spec.Error) *spec.Error
}

func (m *errMapper) mapErr(err error) error {
	e, ok := driver.AsError(err)
	if !ok {
		return err
	}
	c := *e
	return m.fn(&c)
}

func (m *errMapper) CreateTable(ctx context.Context, name string) error {
	return m.mapErr(m.Backend.CreateTable(ctx, name))
}

func (m *errMapper) DeleteTable(ctx context.Context, name string) error {
	return m.mapErr(m.Backend.DeleteTable(ctx, name))
}

func (m *errMapper) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	return p, m.mapErr(err)
}

func (m *errMapper) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	return got, m.mapErr(err)
}

func (m *errMapper) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	return etag, m.mapErr(err)
}

func (m *errMapper) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.mapErr(m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch))
}

func (m *errMapper) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	return e, m.mapErr(err)
}

func (m *errMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	return p, m.mapErr(err)
}

func (m *errMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	return rs, m.mapErr(err)
}

// scrambledCodes maps every documented code to another code of the same HTTP status (the
// next one in code order), or to InternalError when its status has no other code.
func scrambledCodes() map[string]string {
	byStatus := map[int][]string{}
	for _, c := range spec.ErrorCodes() {
		byStatus[c.Status] = append(byStatus[c.Status], c.Code)
	}
	out := map[string]string{}
	for _, codes := range byStatus {
		sort.Strings(codes)
		for i, c := range codes {
			if len(codes) == 1 {
				out[c] = spec.ErrInternalError.Code
				continue
			}
			out[c] = codes[(i+1)%len(codes)]
		}
	}
	return out
}

// Error codes (EVIDENCE.md 6).
var (
	_ = define(Mutant{
		Name:        "error-codes-scrambled",
		Description: "answers every failure with its right HTTP status but another error code of that status",
		Breaks: []string{"modify.insert.conflict", "concurrency.stale-etag.replace", "tables.create.conflict",
			"query.filter.syntax",
			// TableBeingDeleted becomes EntityAlreadyExists: the only wrong answers these MAY rules have.
			"tables.delete.name-reuse", "pattern.high-volume-delete.name-reuse"},
		Areas: []spec.Area{spec.AreaEntities, spec.AreaBatch, spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		codes := scrambledCodes()
		return &errMapper{Backend: b, fn: func(e *spec.Error) *spec.Error {
			if c, ok := codes[e.Code]; ok {
				e.Code = c
			}
			return e
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "not-found-codes-swapped",
		Description: "answers a missing table with ResourceNotFound and a missing entity with TableNotFound",
		// Deleting a missing table may answer either code (tables.delete.not-found); the
		// rules that name a missing entity's or a transaction's code fail.
		Breaks: []string{"batch.failure.code", "batch.table.missing", "modify.missing.code",
			"pattern.eventual.delete-gone", "pattern.impl.point-query"},
		Areas: []spec.Area{spec.AreaBatch, spec.AreaPatterns, spec.AreaModification},
	}, func(b api.Backend) api.Backend {
		return &errMapper{Backend: b, fn: func(e *spec.Error) *spec.Error {
			switch e.Code {
			case spec.ErrTableNotFound.Code:
				e.Code = spec.ErrResourceNotFound.Code
			case spec.ErrResourceNotFound.Code:
				e.Code = spec.ErrTableNotFound.Code
			}
			return e
		}}
	}, hooks{})
)

// entityNotFound answers a missing entity with the documented code EntityNotFound (TERR)
// instead of the ResourceNotFound Storage sends: only the rule about that code may fail
// (spec.MissingEntityAnswers).
type entityNotFound struct{ api.Backend }

func (m *entityNotFound) mapErr(err error) error {
	e, ok := driver.AsError(err)
	if !ok || e.Code != spec.ErrResourceNotFound.Code {
		return err
	}
	c := *e
	c.Code, c.Message = spec.ErrEntityNotFound.Code, spec.ErrEntityNotFound.Message
	return &c
}

func (m *entityNotFound) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	return e, m.mapErr(err)
}

func (m *entityNotFound) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	return etag, m.mapErr(err)
}

func (m *entityNotFound) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.mapErr(m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch))
}

var _ = define(Mutant{
	Name:        "entity-not-found-code",
	Description: "answers a missing entity with 404 EntityNotFound, the code the documentation lists, instead of the ResourceNotFound Storage sends",
	Breaks:      []string{"modify.missing.code"},
	Areas:       []spec.Area{spec.AreaPatterns, spec.AreaRelationships, spec.AreaEntities},
}, func(b api.Backend) api.Backend { return &entityNotFound{Backend: b} }, hooks{})

// deleteMissingTableSucceeds answers Delete Table of a missing table with success, as a
// backend that makes every delete idempotent.
type deleteMissingTableSucceeds struct{ api.Backend }

func (m deleteMissingTableSucceeds) DeleteTable(ctx context.Context, name string) error {
	err := m.Backend.DeleteTable(ctx, name)
	if e, ok := driver.AsError(err); ok && e.Status == http.StatusNotFound {
		return nil
	}
	return err
}

var _ = define(Mutant{
	Name:        "delete-missing-table-succeeds",
	Description: "answers Delete Table of a table that does not exist with success, as an idempotent delete",
	Breaks:      []string{"tables.delete.not-found"},
}, func(b api.Backend) api.Backend { return deleteMissingTableSucceeds{b} }, hooks{})

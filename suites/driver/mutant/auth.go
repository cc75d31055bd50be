package mutant

import (
	"context"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

func identity(b api.Backend) api.Backend { return b }

// sasMutant is a mutant whose only fault is in the SAS it signs: what the client asked to
// restrict is not restricted. It needs a base that can issue a SAS.
func sasMutant(m Mutant, rewrite func(driver.SASOptions) driver.SASOptions) Mutant {
	m.Base, m.LabelFilter = "reference-http", "area:auth"
	return define(m, identity, hooks{sas: rewrite})
}

// Shared access signatures (EVIDENCE.md 7.2).
var (
	_ = sasMutant(Mutant{
		Name:        "sas-ignores-key-range",
		Description: "signs a SAS without the PartitionKey/RowKey range the client asked for, so it reaches the whole table",
		Breaks:      []string{"auth.sas.range.partition", "auth.sas.range.row", "auth.sas.range.query"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.StartPK, o.StartRK, o.EndPK, o.EndRK = "", "", "", ""
		return o
	})

	_ = sasMutant(Mutant{
		Name:        "sas-ignores-permissions",
		Description: "signs every SAS with all permissions (raud), whatever the client asked for",
		Breaks: []string{"auth.sas.permission.read", "auth.sas.permission.add", "auth.sas.permission.update",
			"auth.sas.permission.delete", "auth.sas.permission.upsert"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.Permissions = "raud"
		return o
	})

	_ = sasMutant(Mutant{
		Name:        "sas-all-permissions-without-delete",
		Description: "signs a SAS asked for with all permissions (raud) without the delete permission",
		Breaks:      []string{"auth.sas.permission.all"},
	}, func(o driver.SASOptions) driver.SASOptions {
		if o.Permissions == "raud" {
			o.Permissions = "rau"
		}
		return o
	})

	_ = define(Mutant{
		Name:        "sas-table-scope-ignored",
		Description: "serves requests of a SAS outside its table (other tables, Create and Delete Table) with the account key",
		Breaks:      []string{"auth.sas.other-table", "auth.sas.no-table-management"},
		Base:        "reference-http",
		LabelFilter: "area:auth",
	}, identity, hooks{sasDerived: func(derived, parent api.Backend, o driver.SASOptions) api.Backend {
		return &scopeEscape{Backend: derived, parent: parent, table: o.Table}
	}})

	_ = define(Mutant{
		Name: "sas-rowkey-range-crossed-as-authentication-failure",
		Description: "checks a SAS's RowKey range apart from its PartitionKey range and refuses a RowKey outside it " +
			"with 403 AuthenticationFailed instead of AuthorizationFailure",
		Breaks:      []string{"auth.sas.range.row-reading"},
		Base:        "reference-http",
		LabelFilter: "area:auth",
	}, identity, hooks{sasDerived: func(derived, _ api.Backend, o driver.SASOptions) api.Backend {
		if o.StartRK == "" && o.EndRK == "" {
			return derived
		}
		return &rowRangeCheck{Backend: derived, start: o.StartRK, end: o.EndRK}
	}})

	_ = sasMutant(Mutant{
		Name:        "sas-ignores-validity",
		Description: "signs every SAS valid from now for an hour, whatever start and expiry the client asked for",
		Breaks:      []string{"auth.sas.expired", "auth.sas.not-yet-valid"},
	}, func(o driver.SASOptions) driver.SASOptions {
		o.Start, o.Expiry = time.Time{}, time.Now().Add(time.Hour)
		return o
	})
)

// scopeEscape is a SAS-derived backend that sends what its SAS does not cover to the
// backend holding the account key.
type scopeEscape struct {
	api.Backend
	parent api.Backend
	table  string
}

func (m *scopeEscape) on(table string) api.Backend {
	if strings.EqualFold(table, m.table) {
		return m.Backend
	}
	return m.parent
}

func (m *scopeEscape) CreateTable(ctx context.Context, name string) error {
	return m.parent.CreateTable(ctx, name)
}

func (m *scopeEscape) DeleteTable(ctx context.Context, name string) error {
	return m.parent.DeleteTable(ctx, name)
}

func (m *scopeEscape) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	return m.parent.QueryTables(ctx, q)
}

func (m *scopeEscape) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	return m.on(table).InsertEntity(ctx, table, e)
}

func (m *scopeEscape) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.on(table).UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *scopeEscape) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.on(table).DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *scopeEscape) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	return m.on(table).GetEntity(ctx, table, pk, rk, sel)
}

func (m *scopeEscape) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	return m.on(table).QueryEntities(ctx, table, q)
}

func (m *scopeEscape) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	return m.on(table).SubmitBatch(ctx, table, ops)
}

// Authorization failures as authentication failures.
var _ = define(Mutant{
	Name:        "authorization-as-authentication-failure",
	Description: "answers a request its SAS does not allow with 403 AuthenticationFailed instead of AuthorizationFailure",
	Breaks:      []string{"auth.sas.range.partition"},
	Base:        "reference-http",
	LabelFilter: "area:auth",
}, func(b api.Backend) api.Backend {
	return &errMapper{Backend: b, fn: func(e *spec.Error) *spec.Error {
		switch e.Code {
		case spec.ErrAuthorizationFailure.Code, spec.ErrAuthPermissionMismatch.Code, spec.ErrAuthResourceTypeMismatch.Code:
			e.Code = spec.ErrAuthenticationFailed.Code
		}
		return e
	}}
}, hooks{})

// rowRangeCheck refuses the keys whose RowKey lies outside [start, end] with 403
// AuthenticationFailed.
type rowRangeCheck struct {
	api.Backend
	start, end string
}

func (m *rowRangeCheck) check(rk string) error {
	if (m.start != "" && rk < m.start) || (m.end != "" && rk > m.end) {
		return spec.ErrAuthenticationFailed.New()
	}
	return nil
}

func (m *rowRangeCheck) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if err := m.check(e.RowKey); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *rowRangeCheck) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := m.check(e.RowKey); err != nil {
		return "", err
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *rowRangeCheck) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if err := m.check(rk); err != nil {
		return err
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *rowRangeCheck) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	if err := m.check(rk); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.GetEntity(ctx, table, pk, rk, sel)
}

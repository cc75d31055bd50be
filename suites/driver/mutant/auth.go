package mutant

import (
	"context"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

func identity(b api.Backend) api.Backend { return b }

// sasMutant is a mutant whose only fault is in the SAS it signs: what the client asked to
// restrict is not restricted. It needs a base that can issue a SAS.
func sasMutant(m Mutant, rewrite func(driver.SASOptions) driver.SASOptions) Mutant {
	m.Base, m.LabelFilter = "reference-http", "area:auth"
	return define(m, identity, hooks{sas: rewrite})
}

// Shared access signatures (SPEC.md 7.2).
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
	}, identity, hooks{sasScope: true})

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

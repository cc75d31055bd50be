package relationships

import (
	"context"
	"errors"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	. "github.com/tableconform/conform/suites/matchers"
)

// maxPages bounds every query a spec runs to its end; the data sets are small.
const maxPages = 200

// errCrash is what a mover returns when a spec stops it between its two steps.
var errCrash = errors.New("mover stopped between its steps (crash injected by the spec)")

// propEntityType is the property the guide uses to tell entity types apart.
const propEntityType = "EntityType"

// props builds a property map from name/value pairs.
func props(kv ...any) map[string]api.Value {
	m := make(map[string]api.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return m
}

// entity builds an entity from keys and name/value pairs.
func entity(pk, rk string, kv ...any) api.Entity { return api.NewEntity(pk, rk, props(kv...)) }

// strip returns e as it would be sent: keys and custom properties only.
func strip(e api.Entity) api.Entity {
	return api.NewEntity(e.PartitionKey, e.RowKey, e.Clone().Properties)
}

// quote renders s as an OData string literal, doubling single quotes.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// and joins filter clauses, each in parentheses.
func and(clauses ...string) string {
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = "(" + c + ")"
	}
	return strings.Join(parts, " and ")
}

// cmp renders one comparison with a string literal.
func cmp(prop, op, value string) string { return prop + " " + op + " " + quote(value) }

// load stores es in table with batches, failing the spec on error (setting up).
func load(ctx context.Context, b driver.Backend, table string, es []api.Entity) {
	GinkgoHelper()
	Expect(fixtures.InsertAll(ctx, b, table, es)).To(SucceedOnBackend(), "setting up: load %d entities into %s", len(es), table)
}

// queryAll runs q to its end and returns every entity, in the order they came.
func queryAll(ctx context.Context, b driver.Backend, table string, q api.Query) ([]api.Entity, error) {
	r, err := QueryAll(ctx, b, table, q, maxPages)
	return r.Entities(), err
}

// mustGet reads one entity.
func mustGet(ctx context.Context, b driver.Backend, table, pk, rk string) api.Entity {
	GinkgoHelper()
	got, err := b.GetEntity(ctx, table, pk, rk, nil)
	Expect(err).To(SucceedOnBackend(), "reading (%q,%q) from %s", pk, rk, table)
	return got
}

// isStatus reports whether err is a service error with the given status.
func isStatus(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status
}

// sortByKey sorts es in the service's result order.
func sortByKey(es []api.Entity) []api.Entity {
	out := append([]api.Entity(nil), es...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out
}

// employeesOf returns the employees of one department in emps.
func employeesOf(emps []fixtures.Employee, dept string) []fixtures.Employee {
	var out []fixtures.Employee
	for _, e := range emps {
		if e.Department == dept {
			out = append(out, e)
		}
	}
	return out
}

// entitiesOf returns the base-design entities of emps.
func entitiesOf(emps []fixtures.Employee) []api.Entity {
	out := make([]api.Entity, len(emps))
	for i, e := range emps {
		out[i] = e.Entity()
	}
	return out
}

// departmentOf returns the department record of the given name for emps.
func departmentOf(emps []fixtures.Employee, name string) fixtures.Department {
	for _, d := range fixtures.DepartmentRecords(emps) {
		if d.Name == name {
			return d
		}
	}
	return fixtures.Department{Name: name}
}

// codeOf returns the error code of a service error, or a description of anything else.
func codeOf(err error) string {
	if e, ok := driver.AsError(err); ok {
		return e.Code
	}
	return DescribeOutcome(err)
}

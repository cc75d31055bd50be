package relationships

import (
	"errors"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	. "github.com/tableconform/conform/suites/matchers"
)

// errCrash is what a mover returns when a spec stops it between its two steps.
var errCrash = errors.New("mover stopped between its steps (crash injected by the spec)")

// propEntityType is the property the guide uses to tell entity types apart.
const propEntityType = "EntityType"

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

package provision

import (
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// newREST connects to cs with the raw REST driver.
func newREST(cs string, info driver.Info) (driver.Backend, error) {
	return rest.New(cs, rest.WithInfo(info))
}

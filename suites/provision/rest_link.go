package provision

import (
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// newREST connects to cs with the raw REST driver, over net/http unless direct is set.
func newREST(cs string, info driver.Info, direct bool) (driver.Backend, error) {
	opts := []rest.Option{rest.WithInfo(info)}
	if direct {
		opts = append(opts, rest.WithDirectSender())
	}
	return rest.New(cs, opts...)
}

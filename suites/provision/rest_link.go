package provision

import (
	"net/http"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// newREST connects to cs with the raw REST driver, through client when it is not nil,
// over net/http unless direct is set (rest.WithDirectSender, for load runs).
func newREST(cs string, info driver.Info, client *http.Client, direct bool) (api.Backend, error) {
	opts := []rest.Option{rest.WithInfo(info)}
	if client != nil {
		opts = append(opts, rest.WithHTTPClient(client))
	}
	if direct {
		opts = append(opts, rest.WithDirectSender())
	}
	return rest.New(cs, opts...)
}

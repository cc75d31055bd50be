package provision

import (
	"net/http"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// newREST connects to cs with the raw REST driver, through client when it is not nil.
func newREST(cs string, info driver.Info, client *http.Client) (driver.Backend, error) {
	if client != nil {
		return rest.New(cs, rest.WithInfo(info), rest.WithHTTPClient(client))
	}
	return rest.New(cs, rest.WithInfo(info))
}

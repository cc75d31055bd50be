package matchers

import (
	"github.com/onsi/gomega/format"

	"github.com/tableconform/conform/reference/api"
)

// Failure messages go into the report as they are written: a property value prints as
// `Edm.Int64(42)` (api.Value's String), not as its packed fields.
func init() {
	format.RegisterCustomFormatter(func(v any) (string, bool) {
		switch x := v.(type) {
		case api.Value:
			return x.String(), true
		case api.EdmType:
			return x.String(), true
		}
		return "", false
	})
}

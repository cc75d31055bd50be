package matchers

import (
	"strings"
	"testing"

	"github.com/onsi/gomega/format"

	"github.com/tableconform/conform/reference/api"
)

func TestFailureMessagesShowValuesAsTheyPrint(t *testing.T) {
	e := api.NewEntity("p", "r", map[string]api.Value{"D": api.Double(3.5), "I": api.Int64(42)})
	got := format.Object(e, 0) + format.Object(api.Double(3.5), 0)
	for _, want := range []string{"Edm.Double(3.5)", "Edm.Int64(42)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not in %s", want, got)
		}
	}
}

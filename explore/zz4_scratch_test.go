package explore

import (
	"os"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver/mutant"
)

func TestScratchDescribe(t *testing.T) {
	names := os.Getenv("SCRATCH_DESCRIBE")
	if names == "" {
		t.Skip()
	}
	for _, n := range strings.Fields(names) {
		m, _ := mutant.Lookup(n)
		t.Logf("%s: %s", n, m.Description)
	}
}

package explore

import (
	"os"
	"strings"
	"testing"
)

func TestScratchSome(t *testing.T) {
	names := os.Getenv("SCRATCH_MUTANTS")
	if names == "" {
		t.Skip()
	}
	for _, n := range strings.Split(names, ",") {
		res := exploreMutant(t, n, 3000)
		if len(res.Differences) == 0 {
			t.Logf("%s: MISS after %d ops", n, res.Operations)
			continue
		}
		d := res.Differences[0]
		t.Logf("%s: found after %d ops, %d ops (%d shrink runs): %s; %s", n, res.Operations, len(d.Ops), d.ShrinkRuns, d.Signature, d.Coverage)
	}
}

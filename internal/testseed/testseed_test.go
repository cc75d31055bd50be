package testseed

import (
	"testing"
)

func TestSeedFromEnvironment(t *testing.T) {
	if *seedFlag != 0 {
		t.Skip("-seed is set")
	}
	t.Setenv("CONFORM_SEED", "12345")
	if got := Seed(t, "go test ./internal/testseed"); got != 12345 {
		t.Fatalf("Seed = %d with CONFORM_SEED=12345", got)
	}
}

package testseed

import (
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomised tests (default: CONFORM_SEED, else random)")

// Seed returns the seed of a randomised test and logs it, with replay (the go test command
// that runs the test) followed by the -seed flag that replays it.
func Seed(t testing.TB, replay string) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		if env := os.Getenv("CONFORM_SEED"); env != "" {
			n, err := strconv.ParseUint(env, 10, 64)
			if err != nil {
				t.Fatalf("CONFORM_SEED=%q: %v", env, err)
			}
			seed = n
		} else {
			seed = rand.Uint64()
		}
	}
	t.Logf("seed %d (replay: %s -seed %d)", seed, replay, seed)
	return seed
}

// Package testseed gives the project's randomised tests their seed: -seed N, else the
// environment's CONFORM_SEED=N, else a random one. A test logs the seed with the command
// that replays it, so that any failure it finds can be run again.
//
// It may import only the standard library, and only tests import it.
package testseed

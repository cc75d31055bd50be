package verdict

import "testing"

func TestExploreExit(t *testing.T) {
	cases := []struct {
		name string
		e    Explore
		want int
	}{
		{"a new difference fails", Explore{Sequences: 10, New: 1}, ExitFailed},
		{"a new difference fails an interrupted run too", Explore{Sequences: 10, New: 1, Interrupted: true}, ExitFailed},
		{"nothing run is inconclusive", Explore{}, ExitInconclusive},
		{"only unanswered sequences are inconclusive", Explore{Sequences: 3, Inconclusive: 3}, ExitInconclusive},
		{"an interrupted run is inconclusive", Explore{Sequences: 10, Interrupted: true}, ExitInconclusive},
		{"answered sequences without a new difference conform", Explore{Sequences: 10, Inconclusive: 2}, ExitOK},
	}
	for _, c := range cases {
		if got := ExploreExit(c.e); got != c.want {
			t.Errorf("%s: ExploreExit(%+v) = %d, want %d", c.name, c.e, got, c.want)
		}
	}
}

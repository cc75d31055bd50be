package verdict

// Explore is what ExploreExit reads of an exploration (conform explore).
type Explore struct {
	// Sequences counts the sequences run, Inconclusive those that ended on a call without
	// an answer.
	Sequences, Inconclusive int64
	// New counts the differences found that no baseline lists.
	New int
	// Interrupted is set when the run was stopped before its bound.
	Interrupted bool
}

// ExploreExit is the exit status of `conform explore`: 1 when it found a difference that no
// baseline lists; 3 (inconclusive) when it was interrupted, or when no sequence ran to its
// end with both backends answering; 0 only when sequences ran to the bound and none showed
// a new difference.
func ExploreExit(e Explore) int {
	switch {
	case e.New > 0:
		return ExitFailed
	case e.Interrupted || e.Sequences-e.Inconclusive <= 0:
		return ExitInconclusive
	}
	return ExitOK
}

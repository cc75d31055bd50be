package spec

// unbreakable lists the rules that no wrong-backend decorator (suites/driver/mutant) can
// make fail, with the reason. The mutation test (suites/all) checks every other rule against
// the mutants: a rule is either failed by one of them or listed here.
//
// It is a package-level value, consulted when a rule is looked up (LookupRule, Rules), so it
// does not depend on the order in which the rules files' init functions run;
// TestUnbreakableNamesRules checks that every id names a rule.
var unbreakable = map[string]string{
	"query.compare.mismatch": "A MAY on open evidence: its spec records any selection and any 400 refusal the backend answers, so only a server error fails it, which no decorator answers to these filters alone.",
	"auth.anonymous":         "Its spec sends the request without credentials through its own HTTP client, around the backend's driver and any decorator, so only the service itself decides the answer.",
	"batch.table.single":     "Its spec sends a hand-made multipart transaction naming two tables over raw HTTP, which the Backend interface cannot express (SubmitBatch takes one table), so no decorator of that interface sees the request.",
	"batch.changeset.single": "Its spec sends a hand-made multipart transaction with two changesets over raw HTTP, which the Backend interface cannot express (SubmitBatch takes one list of operations), so no decorator of that interface sees the request.",
}

// withUnbreakable returns r with its Unbreakable reason from the list above.
func withUnbreakable(r Rule) Rule {
	if why, ok := unbreakable[r.ID]; ok {
		r.Unbreakable = why
	}
	return r
}

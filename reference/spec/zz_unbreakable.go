package spec

// The rules that no wrong-backend decorator (suites/driver/mutant) can make fail, with the
// reason. The mutation test (suites/all) checks every other rule against the mutants: a
// rule is either failed by one of them or listed here.
//
// This file's name sorts after every rules_*.go file, so its init runs after the rules are
// added (Go runs a package's init functions in the order of its file names).

// SetUnbreakable records why no decorator over a correct backend can break the rule id. It
// is called from init functions and panics on an unknown rule: the catalogue is checked
// when the program starts.
func SetUnbreakable(id, why string) {
	r, ok := catalogue[id]
	if !ok {
		panic("spec: SetUnbreakable of unknown rule " + id)
	}
	r.Unbreakable = why
	catalogue[id] = r
}

func init() {
	SetUnbreakable("auth.anonymous",
		"Its spec sends the request without credentials through its own HTTP client, around the backend's driver and any decorator, so only the service itself decides the answer.")
	SetUnbreakable("batch.table.single",
		"Its spec sends a hand-made multipart transaction naming two tables over raw HTTP, which the Backend interface cannot express (SubmitBatch takes one table), so no decorator of that interface sees the request.")
	SetUnbreakable("batch.changeset.single",
		"Its spec sends a hand-made multipart transaction with two changesets over raw HTTP, which the Backend interface cannot express (SubmitBatch takes one list of operations), so no decorator of that interface sees the request.")
}

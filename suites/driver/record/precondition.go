package record

import "sync/atomic"

// preconditionNoter is the function NotePrecondition passes a note to: the framework's,
// which turns it into a block of the running spec (SetPreconditionNoter).
var preconditionNoter atomic.Pointer[func(rule, step, message string)]

// SetPreconditionNoter registers the function that takes NotePrecondition's notes. The
// framework, which runs the specs, registers its own; nothing else should.
func SetPreconditionNoter(note func(rule, step, message string)) { preconditionNoter.Store(&note) }

// NotePrecondition announces, from inside an assertion about to fail with a message that
// holds message, that what failed is a step rule covers (step says which), as the
// framework's NoteFailedPrecondition reads it. It lets suites/matchers, which may not import
// the framework (matchers declare and run nothing), pass the note through the recorder both
// see; with no noter registered it does nothing.
func NotePrecondition(rule, step, message string) {
	if note := preconditionNoter.Load(); note != nil {
		(*note)(rule, step, message)
	}
}

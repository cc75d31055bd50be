package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// stoppedAnsweringAfter is how many specs in a row must get no answer before the backend
// is probed, and its run stopped when the probe gets no answer either. A live service
// leaves a spec unanswered now and then (a spec's timeout, a reset that outlived the
// retries), rarely two in a row; each unanswered spec has already had its calls retried as
// the SDKs retry them (about 9 s a call). Five in a row, over all the processes that run
// the backend's parts, is a backend gone: a run that went on would wait out every
// remaining spec (issue 31: 17 minutes and 170 errors after a kill).
const stoppedAnsweringAfter = 5

// answerProbeTimeout bounds the one Query Tables that confirms a backend stopped answering.
const answerProbeTimeout = 10 * time.Second

// comeBackWithin bounds how long a run stopped for a backend that stopped answering waits
// for it to answer again, to delete this run's tables; comeBackEvery spaces the probes.
const (
	comeBackWithin = 30 * time.Second
	comeBackEvery  = 3 * time.Second
)

// answerWatch counts the specs in a row that got no answer, and records when the backend
// was found to have stopped answering. Ginkgo's reporting nodes and the specs' setup nodes
// read it. When shared names a file, the count is kept there, one byte per unanswered
// spec, so that the processes running one backend's parts at once count together (an
// answered spec in any of them empties it); otherwise it is this process's own.
type answerWatch struct {
	mu         sync.Mutex
	shared     string
	unanswered int
	stopped    time.Time
}

// spec notes the outcome of a spec that ran, and reports whether stoppedAnsweringAfter
// specs in a row have now got no answer (the backend is then to be probed; the count
// starts again). A spec that was not run (left out, skipped) changes nothing.
func (w *answerWatch) spec(o verdict.Outcome) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch o {
	case verdict.Skipped, verdict.NotRun, "":
		return false
	case verdict.Error:
		w.unanswered++
		if n, ok := appendByte(w.shared); ok {
			w.unanswered = n
		}
	default:
		w.unanswered = 0
		emptyFile(w.shared)
	}
	if w.unanswered < stoppedAnsweringAfter || !w.stopped.IsZero() {
		return false
	}
	w.unanswered = 0
	emptyFile(w.shared)
	return true
}

// appendByte appends one byte to the file at path and returns its size after; false when
// there is no path or the file cannot be written (the count is then the process's own).
func appendByte(path string) (int, bool) {
	if path == "" {
		return 0, false
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if _, err := f.Write([]byte{'x'}); err != nil {
		return 0, false
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	return int(fi.Size()), true
}

func emptyFile(path string) {
	if path != "" {
		_ = os.Truncate(path, 0)
	}
}

// stop records that the backend stopped answering at t.
func (w *answerWatch) stop(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.IsZero() {
		w.stopped = t
	}
}

// stoppedAt is when the backend stopped answering; zero while it answers.
func (w *answerWatch) stoppedAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// probeAnswer sends one Query Tables, bounded by answerProbeTimeout and not retried, and
// returns its error when no answer came back (driver.IsTransport). Any answer, an error
// status included, is an answer.
func probeAnswer(b api.Backend) error {
	ctx, cancel := context.WithTimeout(context.Background(), answerProbeTimeout)
	defer cancel()
	_, err := b.QueryTables(ctx, api.TableQuery{Top: 1})
	if err != nil && driver.IsTransport(err) {
		return err
	}
	return nil
}

// stoppedAnsweringWords says when a backend stopped answering: the local time, then the
// instant in RFC 3339 (UTC).
func stoppedAnsweringWords(name string, at time.Time) string {
	return fmt.Sprintf("%s stopped answering at %s (%s)", name, at.Local().Format(time.TimeOnly), at.UTC().Format(time.RFC3339))
}

// cleanAfterStop deletes this process's tables once a backend that stopped answering
// answers again, waiting for it at most comeBackWithin, and says what it did by an event:
// "came-back" when the tables were deleted, "tables-left" with the prefix of this run's
// tables and the backend argument that deletes them later (`conform clean`).
func cleanAfterStop(b api.Backend, arg string) {
	deadline := time.Now().Add(comeBackWithin)
	for {
		if probeAnswer(b) == nil {
			emit(event{Kind: "came-back"})
			sweepProcessTables(b, false)
			return
		}
		if time.Now().Add(comeBackEvery).After(deadline) {
			break
		}
		time.Sleep(comeBackEvery)
	}
	backend := reusableArgument(arg)
	if backend == "" {
		backend = framework.BackendName(arg) + "='<connection string>'"
	}
	emit(event{Kind: "tables-left", Text: framework.RunPrefix(), Rule: backend})
}

// childAnswerFilesEnv starts the names of the files through which the processes that
// run one backend's parts at once share what they learn of its answers: PREFIX.unanswered
// holds the count of specs in a row without an answer (answerWatch), PREFIX.stopped the time
// the first of them found the backend stopped answering, so that the others stop at their
// next spec instead of finding it again each.
const childAnswerFilesEnv = "CONFORM_ANSWER_FILES"

// writeStopFile records at in path; a failure to write only means the other parts find
// the stop themselves.
func writeStopFile(path string, at time.Time) {
	if path != "" {
		_ = os.WriteFile(path, []byte(at.Format(time.RFC3339Nano)), 0o644)
	}
}

// readStopFile is the time another part recorded in path; zero when there is none.
func readStopFile(path string) time.Time {
	if path == "" {
		return time.Time{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		return time.Time{}
	}
	return at
}

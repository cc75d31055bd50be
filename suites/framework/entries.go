package framework

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
	"github.com/tableconform/conform/suites/verdict"
)

// Typed report entries: suites/report classifies a spec by them, never by the text of its
// failure (a backend's error text could hold any marker string).
const (
	// EntryTransport: a call got no answer (record.MarkTransport), or the backend could not
	// be opened: the spec's outcome is an error, not a fail of its rule.
	EntryTransport = "conform.transport"
	// EntryNotExpressible: the driver could not send a request (driver.ErrNotExpressible).
	EntryNotExpressible = "conform.not-expressible"
	// EntryBlocked: the spec's setup failed on a behaviour another rule covers.
	EntryBlocked = "conform.blocked"
	// EntryResult: what happened to the spec (verdict.Result): its state, failure
	// signature, blocking rule and choices; verdict.Decide turns it into the outcome.
	EntryResult = "conform.result"
	// EntryBaseline: the backend's baseline entry for the spec (fixtures.ExpectedFailure),
	// when one lists it.
	EntryBaseline = "conform.baseline"
	// EntrySignature: what a failed spec's failure looked like (fixtures.Signature), for
	// baselines.
	EntrySignature = "conform.signature"
)

// TransportEntry is the value of an EntryTransport or EntryNotExpressible entry.
type TransportEntry struct {
	Op    string `json:"op"`
	Error string `json:"error"`
}

// BlockedEntry is the value of an EntryBlocked entry: the spec's setup step failed on the
// behaviour of Rule, so the spec's own rule was never exercised.
type BlockedEntry struct {
	Rule  string `json:"rule"`
	Step  string `json:"step"`
	Error string `json:"error"`
}

// Blocked blocks the running spec by rule: a step the spec relies on (step, e.g. "load 40
// entities") failed with err, an answer of the backend, on a behaviour that rule covers,
// so the spec's own rule never ran. A transport error is not a block: the spec got no
// answer (an error). The outcome is decided by verdict.Decide (blocked, expected when the
// baseline lists the block).
func Blocked(rule, step string, err error) {
	ginkgo.GinkgoHelper()
	ruleOf(rule) // a blocking rule must exist
	res, msg := verdict.Result{State: verdict.StateBlocked, BlockedBy: rule}, blockedMessage(rule, "setting up ("+step+")", err.Error())
	if (driver.Unanswered(err) || record.AfterRetryOfApplied(err)) && !errors.Is(err, driver.ErrNotExpressible) {
		ginkgo.AddReportEntry(EntryTransport, TransportEntry{Op: step, Error: err.Error()}, ginkgo.ReportEntryVisibilityNever)
		res, msg = verdict.Result{State: verdict.StateNoAnswer}, fmt.Sprintf("setting up (%s): %v", step, err)
	} else {
		ginkgo.AddReportEntry(EntryBlocked, BlockedEntry{Rule: rule, Step: step, Error: err.Error()}, ginkgo.ReportEntryVisibilityNever)
	}
	run := currentRun.Load()
	if run == nil || run.isConcluded() {
		ginkgo.Fail(msg)
		return
	}
	run.conclude(res, msg, 1)
}

// markCalls attaches typed entries for the failed calls of a failed spec: the first
// transport failure and the first request the driver could not send.
func markCalls(calls []record.Call) {
	var transport, notExpressible bool
	for _, c := range calls {
		switch {
		case (c.Mark == record.MarkTransport || c.Mark == record.MarkRetried) && !transport:
			transport = true
			why := c.Err
			if c.Mark == record.MarkRetried {
				why = "answered to a retry after an attempt that may have been carried out: " + c.Got
			}
			ginkgo.AddReportEntry(EntryTransport, TransportEntry{Op: c.Op, Error: why}, ginkgo.ReportEntryVisibilityNever)
		case c.Mark == record.MarkNotExpressible && !notExpressible:
			notExpressible = true
			ginkgo.AddReportEntry(EntryNotExpressible, TransportEntry{Op: c.Op, Error: c.Err}, ginkgo.ReportEntryVisibilityNever)
		}
	}
}

// inconclusive reports whether a failed spec's calls make its failure say nothing about
// its rule: a call stayed unanswered after its retries (no answer, or a service still busy),
// or answered a retry after an attempt that may have been carried out.
func inconclusive(calls []record.Call) bool {
	return hasMark(calls, record.MarkTransport) || hasMark(calls, record.MarkRetried)
}

func isStatus(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status
}

func hasMark(calls []record.Call, mark string) bool {
	for _, c := range calls {
		if c.Mark == mark {
			return true
		}
	}
	return false
}

// FailureSignature is what a failure looked like (fixtures.Signature): the status and
// code of the spec's last call when it came back with an error status, a raw HTTP
// exchange's included (the answer the failing assertion is about; an error earlier in the
// spec, such as an expected 409, is not), and the failure's assertion line (the matcher's
// "but ..." line when there is one), masked.
func FailureSignature(failure string, calls []record.Call) fixtures.Signature {
	var s fixtures.Signature
	if n := len(calls); n > 0 {
		switch last := calls[n-1]; {
		case last.Status >= 300:
			s.Status, s.Code = last.Status, last.Code
		case last.RawStatus >= 300:
			s.Status, s.Code = last.RawStatus, last.RawCode
		}
	}
	s.Assertion = fixtures.MaskAssertion(AssertionLine(failure))
	return s
}

// AssertionLine is the line of a failure that says what came back: the matcher's line
// with " but " when there is one, else the first line.
func AssertionLine(failure string) string {
	for _, l := range strings.Split(failure, "\n") {
		if strings.Contains(l, " but ") {
			return strings.TrimSpace(l)
		}
	}
	line := strings.TrimSpace(failure)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return line
}

// backendUnavailable fails the spec as an error: the backend could not be opened.
func backendUnavailable(err error) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(EntryTransport, TransportEntry{Op: "open backend", Error: err.Error()}, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Fail(fmt.Sprintf("the backend could not be opened: %v", err))
}

package patterns

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The eventually consistent transactions pattern archives an employee across two tables
// with a queue and a worker: the client queues a request; the worker reads the employee
// from the current table, copies it into the archive table with Insert Or Replace, deletes
// it from the current table (a 404 means an earlier attempt did) and only then deletes the
// message. A worker that dies in between leaves the message hidden until its visibility
// timeout passes; the next attempt repeats the idempotent steps.

// archiveRequest is the queued message: the employee to archive.
type archiveRequest struct{ Department, EmployeeID string }

type queuedMessage struct {
	body         archiveRequest
	dequeueCount int
	hidden       bool
}

// memQueue stands in for an Azure queue: Get hides the message it hands out until it is
// deleted or Expire (its visibility timeout) makes it visible again.
type memQueue struct {
	mu     sync.Mutex
	msgs   []*queuedMessage
	poison []archiveRequest
}

func (q *memQueue) Put(r archiveRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, &queuedMessage{body: r})
}

func (q *memQueue) Get() (*queuedMessage, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.msgs {
		if !m.hidden {
			m.hidden = true
			m.dequeueCount++
			return m, true
		}
	}
	return nil, false
}

func (q *memQueue) remove(m *queuedMessage) {
	for i, x := range q.msgs {
		if x == m {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			return
		}
	}
}

func (q *memQueue) Delete(m *queuedMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.remove(m)
}

func (q *memQueue) MoveToPoison(m *queuedMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.remove(m)
	q.poison = append(q.poison, m.body)
}

// Expire ends the visibility timeout of every hidden message.
func (q *memQueue) Expire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.msgs {
		m.hidden = false
	}
}

func (q *memQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// workerStep names the step after which a spec stops the worker.
type workerStep int

const (
	runToEnd workerStep = iota
	stopAfterRead
	stopAfterArchive
	stopAfterDelete
)

// archiver is the pattern's worker role.
type archiver struct {
	b                api.Backend
	current, archive string
	q                *memQueue
	maxDequeue       int
}

// work handles one message; it returns errCrash right after the step stop names.
func (w *archiver) work(ctx context.Context, stop workerStep) error {
	m, ok := w.q.Get()
	if !ok {
		return nil
	}
	if m.dequeueCount > w.maxDequeue {
		w.q.MoveToPoison(m)
		return nil
	}
	r := m.body
	e, err := w.b.GetEntity(ctx, w.current, r.Department, r.EmployeeID, nil)
	switch {
	case scenario.IsStatus(err, 404):
		// An earlier attempt already removed it from the current table.
	case err != nil:
		return fmt.Errorf("read the employee: %w", err)
	default:
		if stop == stopAfterRead {
			return errCrash
		}
		if _, err := w.b.UpdateEntity(ctx, w.archive, scenario.Strip(e), api.Replace, ""); err != nil {
			return fmt.Errorf("copy into the archive: %w", err)
		}
		if stop == stopAfterArchive {
			return errCrash
		}
		if err := scenario.DeleteAny(ctx, w.b, w.current, r.Department, r.EmployeeID); err != nil && !scenario.IsStatus(err, 404) {
			return fmt.Errorf("delete from the current table: %w", err)
		}
		if stop == stopAfterDelete {
			return errCrash
		}
	}
	w.q.Delete(m)
	return nil
}

// startArchive loads the default employees into current and queues the archiving of John
// Jones (Sales, 000223). It returns the worker, Jones and everyone else.
func startArchive(ctx context.Context, b api.Backend, current, archive string) (*archiver, api.Entity, []api.Entity) {
	GinkgoHelper()
	var jones api.Entity
	var others []api.Entity
	for _, e := range fixtures.Employees(0) {
		if e.PartitionKey == "Sales" && e.RowKey == "000223" {
			jones = e
		} else {
			others = append(others, e)
		}
	}
	scenario.Load(ctx, b, current, fixtures.Employees(0))
	q := &memQueue{}
	q.Put(archiveRequest{Department: "Sales", EmployeeID: "000223"})
	return &archiver{b: b, current: current, archive: archive, q: q, maxDequeue: 3}, jones, others
}

var _ = framework.Describe("Eventually consistent transactions pattern", func(f *framework.F) {
	f.DescribeTable("pattern.eventual.converges", "archives the employee exactly once after the worker runs again",
		func(ctx context.Context, stop workerStep) {
			b, current, archive := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
			w, jones, others := startArchive(ctx, b, current, archive)
			err := w.work(ctx, stop)
			if stop != runToEnd {
				Expect(err).To(MatchError(errCrash))
				Expect(w.q.Len()).To(Equal(1), "the message stays queued while the worker is down")
				w.q.Expire()
				err = w.work(ctx, runToEnd)
				// The run again repeats the steps done before the stop: that a repeated
				// upsert succeeds is pattern.eventual.upsert-repeatable's subject.
				f.Requires("pattern.eventual.upsert-repeatable", "the worker's run again, which repeats its upsert, succeeds", func() {
					Expect(err).To(SucceedOnBackend())
				})
			}
			Expect(err).To(SucceedOnBackend())
			Expect(w.q.Len()).To(BeZero(), "the worker deletes the message once every step is done")
			Expect(archive).To(HoldExactly(ctx, b, jones))
			scenario.RequireDeleted(ctx, f, b, current, jones.Key())
			Expect(current).To(HoldExactly(ctx, b, others...))
		},
		Entry("when the worker runs without stopping", runToEnd),
		Entry("when it stops after reading the employee", stopAfterRead),
		Entry("when it stops after copying the employee into the archive table", stopAfterArchive),
		Entry("when it stops after deleting the employee from the current table", stopAfterDelete),
	)

	Context("when the worker stops between the copy and the delete", func() {
		f.It("pattern.eventual.no-isolation", "lets a reader see the employee in both tables", func(ctx context.Context) {
			b, current, archive := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
			w, jones, _ := startArchive(ctx, b, current, archive)
			Expect(w.work(ctx, stopAfterArchive)).To(MatchError(errCrash))
			Expect(current).To(HoldEntity(ctx, b, jones))
			Expect(archive).To(HoldEntity(ctx, b, jones))
		})
	})

	Context("when a step is repeated by a retry", func() {
		f.It("pattern.eventual.upsert-repeatable", "accepts Insert Or Replace every time and keeps what was sent last", func(ctx context.Context) {
			b, archive := f.Backend(), f.NewTable(ctx)
			jones, _ := fixtures.FindEmployee(fixtures.EmployeeRecords(0), "000223")
			first := jones.Entity()
			_, err := b.UpdateEntity(ctx, archive, first, api.Replace, "")
			Expect(err).To(SucceedOnBackend(), "the first copy creates the entity")
			_, err = b.UpdateEntity(ctx, archive, first, api.Replace, "")
			Expect(err).To(SucceedOnBackend(), "the same copy again")
			last := first.With("ArchivedBy", api.String("worker-2"))
			_, err = b.UpdateEntity(ctx, archive, last, api.Replace, "")
			Expect(err).To(SucceedOnBackend(), "a later attempt that sends more")
			Expect(archive).To(HoldExactly(ctx, b, last))
		})

		f.It("pattern.eventual.delete-gone", "answers a second delete with 404 and changes nothing", func(ctx context.Context) {
			b, current := f.Backend(), f.NewTable(ctx)
			_, jones, others := startArchive(ctx, b, current, "")
			Expect(scenario.DeleteAny(ctx, b, current, jones.PartitionKey, jones.RowKey)).To(SucceedOnBackend())
			err := scenario.DeleteAny(ctx, b, current, jones.PartitionKey, jones.RowKey)
			Expect(err).To(HaveFailedAs(spec.MissingEntityAnswers...))
			scenario.RequireDeleted(ctx, f, b, current, jones.Key())
			Expect(current).To(HoldExactly(ctx, b, others...))
		})
	})

	Context("when the archive table does not exist", func() {
		f.It("pattern.eventual.missing-table", "fails every copy with 404 until the message goes to the poison queue", func(ctx context.Context) {
			b, current, archive := f.Backend(), f.NewTable(ctx), f.TableName()
			f.CleanupTable(archive)
			w, jones, _ := startArchive(ctx, b, current, archive)
			var errs []error
			for range w.maxDequeue + 1 {
				if err := w.work(ctx, runToEnd); err != nil {
					errs = append(errs, err)
				}
				w.q.Expire()
			}
			Expect(errs).To(HaveLen(w.maxDequeue), "every attempt up to the dequeue limit fails")
			for _, err := range errs {
				Expect(err).To(HaveFailedWith(404))
			}
			Expect(w.q.poison).To(ConsistOf(archiveRequest{Department: "Sales", EmployeeID: "000223"}))
			Expect(current).To(HoldEntity(ctx, b, jones), "a failed copy must not lose the employee")
			_, err := b.QueryEntities(ctx, archive, api.Query{})
			Expect(err).To(HaveFailedWith(404), "no write may create the missing table")
		})
	})
})

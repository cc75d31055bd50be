package explore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/reference/api"
)

// StepResult is one operation of a sequence with both backends' answers. The read-back that
// ends a sequence is a step too, with ReadBack set.
type StepResult struct {
	Op       gen.Op `json:"-"`
	Line     string `json:"op"`
	ReadBack bool   `json:"readBack,omitempty"`
	Explored Answer `json:"explored"`
	Against  Answer `json:"against"`
}

// Differs reports whether the two answers differ.
func (s StepResult) Differs() bool { return !s.Explored.equal(s.Against) }

// sequenceRun is a sequence run on both backends: its steps up to the first difference (or
// all of them and the read-back), and whether it ended without a verdict.
type sequenceRun struct {
	steps      []StepResult
	diffAt     int // index into steps of the first difference; -1 for none
	unanswered error
}

// tableNames names a sequence's tables on one side: prefix, the side's letter, the index.
// prefix is "cf" and eight letters or digits, the shape of a conform run's tables, which
// conform replay gives its own prefix in place of.
func tableNames(prefix string, side byte, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + string(side) + "t" + strconv.Itoa(i)
	}
	return out
}

// callTimeout bounds one operation on one backend.
const callTimeout = 30 * time.Second

// runOn runs ops on both sides, comparing after each operation, and reads both sides' tables
// back at the end. Both sides' tables are created first and deleted last.
func runOn(ctx context.Context, explored, against *Side, ops []gen.Op) (run sequenceRun) {
	run = sequenceRun{diffAt: -1}
	sides := []*Side{explored, against}
	defer func() {
		// A backend in process that panics gave no answer; the sequence ends without a
		// verdict rather than the exploration.
		if r := recover(); r != nil {
			run.unanswered = fmt.Errorf("%w: a backend panicked: %v", errUnanswered, r)
		}
	}()
	defer func() {
		for _, s := range sides {
			for _, name := range s.Tables {
				cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				_ = s.Backend.DeleteTable(cctx, name)
				cancel()
			}
		}
	}()
	for i := range explored.Tables {
		for _, s := range sides {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			err := s.Backend.CreateTable(cctx, s.Tables[i])
			cancel()
			if err != nil {
				run.unanswered = fmt.Errorf("%w: creating the sequence's tables: %v", errUnanswered, err)
				return run
			}
		}
	}
	for _, op := range ops {
		step := StepResult{Op: op, Line: op.String()}
		var err error
		step.Explored, step.Against, err = both(ctx, explored, against, func(ctx context.Context, s *Side) (Answer, error) { return s.do(ctx, op) })
		if err != nil {
			run.unanswered = err
			return run
		}
		run.steps = append(run.steps, step)
		if step.Differs() {
			run.diffAt = len(run.steps) - 1
			return run
		}
	}
	step := StepResult{Line: "read back every table", ReadBack: true}
	var err error
	step.Explored, step.Against, err = both(ctx, explored, against, func(ctx context.Context, s *Side) (Answer, error) { return s.readBack(ctx) })
	if err != nil {
		run.unanswered = err
		return run
	}
	run.steps = append(run.steps, step)
	if step.Differs() {
		run.diffAt = len(run.steps) - 1
	}
	return run
}

func both(ctx context.Context, explored, against *Side, call func(context.Context, *Side) (Answer, error)) (Answer, Answer, error) {
	var answers [2]Answer
	for i, s := range []*Side{explored, against} {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		a, err := call(cctx, s)
		cancel()
		if err != nil {
			if !errors.Is(err, errUnanswered) {
				err = fmt.Errorf("%w: %v", errUnanswered, err)
			}
			return Answer{}, Answer{}, err
		}
		answers[i] = a
	}
	return answers[0], answers[1], nil
}

// RunOne runs ops on one backend alone, in tables named from prefix, and returns its
// answers: how a minimal sequence is run again to record it.
func RunOne(ctx context.Context, b api.Backend, prefix string, tables int, ops []gen.Op) ([]Answer, error) {
	s := &Side{Backend: b, Tables: tableNames(prefix, 'a', tables), etags: map[etagKey][]string{}}
	defer func() {
		for _, name := range s.Tables {
			cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			_ = b.DeleteTable(cctx, name)
			cancel()
		}
	}()
	for _, name := range s.Tables {
		if err := b.CreateTable(ctx, name); err != nil {
			return nil, err
		}
	}
	var out []Answer
	for _, op := range ops {
		a, err := s.do(ctx, op)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	a, err := s.readBack(ctx)
	if err != nil {
		return out, err
	}
	return append(out, a), nil
}

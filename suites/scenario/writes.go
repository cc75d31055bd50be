package scenario

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
)

// Write is one of the documented writes of a whole entity, named as the REST operation.
// Existing is set for the writes that need the entity to exist already (Update Entity,
// Merge Entity): a spec stores the entity before it writes. Do returns the ETag the write
// answered.
type Write struct {
	Name     string
	Existing bool
	Do       func(ctx context.Context, b api.Backend, table string, e api.Entity) (etag string, err error)
	// Succeeds is the rule whose subject is the write succeeding on the entity a spec
	// stored before it (on a new entity, for Insert Entity).
	Succeeds string
}

// Require performs w on e, which the spec stored before unless w is Insert Entity, as a step
// of a spec whose subject is something else the write does (its ETag, its Timestamp): its
// success is a precondition under w.Succeeds. It returns the ETag the write answered.
func (w Write) Require(ctx context.Context, f *framework.F, b api.Backend, table string, e api.Entity) string {
	ginkgo.GinkgoHelper()
	var etag string
	f.Requires(w.Succeeds, fmt.Sprintf("%s of (%q, %q) succeeds", w.Name, e.PartitionKey, e.RowKey), func() {
		var err error
		etag, err = w.Do(ctx, b, table, e)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), w.Name)
	})
	return etag
}

// RequireMatched is the precondition of a spec that judges err, the answer to w, whatever
// it is (a success, a refusal of the entity): when w sends If-Match * (Update Entity, Merge
// Entity), that If-Match * matches the existing entity is the subject of
// RuleIfMatchAny, so a 412 answer blocks the spec. For the other writes it checks nothing.
func (w Write) RequireMatched(f *framework.F, err error) {
	ginkgo.GinkgoHelper()
	if w.Succeeds != RuleIfMatchAny {
		return
	}
	RequireIfMatchAnyMatched(f, err, w.Name)
}

// RuleIfMatchAny is the rule whose subject is If-Match * matching an existing entity.
const RuleIfMatchAny = "concurrency.if-match-any"

// RequireIfMatchAnyMatched is the precondition of a spec that judges err, the answer to
// write (a replace, merge or delete of an existing entity with If-Match *): the answer is
// not 412 UpdateConditionNotSatisfied (RuleIfMatchAny).
func RequireIfMatchAnyMatched(f *framework.F, err error, write string) {
	ginkgo.GinkgoHelper()
	f.Requires(RuleIfMatchAny, write+" with If-Match * is not refused as a failed condition", func() {
		gomega.Expect(err).NotTo(matchers.HaveFailedWithStatus(412), "%s with If-Match * of an existing entity", write)
	})
}

// UpdateAny replaces or merges e, an entity the spec stored, with If-Match * and returns
// the answer: a 412 blocks the spec (RequireIfMatchAnyMatched), whatever else it judges.
// Not for goroutines of a spec.
func UpdateAny(ctx context.Context, b api.Backend, table string, e api.Entity, mode api.UpdateMode) (string, error) {
	ginkgo.GinkgoHelper()
	etag, err := b.UpdateEntity(ctx, table, e, mode, api.IfMatchAny)
	requireMatched(err, fmt.Sprintf("the %s of (%q, %q)", mode, e.PartitionKey, e.RowKey))
	return etag, err
}

// DeleteAny deletes the entity (pk, rk) with If-Match * and returns the answer: a 412
// blocks the spec (RequireIfMatchAnyMatched), whatever else it judges. Not for goroutines
// of a spec.
func DeleteAny(ctx context.Context, b api.Backend, table, pk, rk string) error {
	ginkgo.GinkgoHelper()
	err := b.DeleteEntity(ctx, table, pk, rk, api.IfMatchAny)
	requireMatched(err, fmt.Sprintf("the delete of (%q, %q)", pk, rk))
	return err
}

func requireMatched(err error, write string) {
	ginkgo.GinkgoHelper()
	framework.Requires(RuleIfMatchAny, write+" with If-Match * is not refused as a failed condition", func() {
		gomega.Expect(err).NotTo(matchers.HaveFailedWithStatus(412), "%s with If-Match *", write)
	})
}

// The five writes of a whole entity: Insert, Update (replace, If-Match *), Merge (If-Match
// *), Insert Or Replace and Insert Or Merge.
var (
	Insert = Write{Name: "Insert Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		got, err := b.InsertEntity(ctx, t, e)
		return got.ETag, err
	}, Succeeds: "modify.insert.stores"}
	Replace = Write{Name: "Update Entity", Existing: true, Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Replace, api.IfMatchAny)
	}, Succeeds: RuleIfMatchAny}
	Merge = Write{Name: "Merge Entity", Existing: true, Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Merge, api.IfMatchAny)
	}, Succeeds: RuleIfMatchAny}
	InsertOrReplace = Write{Name: "Insert Or Replace Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Replace, "")
	}, Succeeds: "modify.insert-or-replace.replaces"}
	InsertOrMerge = Write{Name: "Insert Or Merge Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Merge, "")
	}, Succeeds: "modify.insert-or-merge.merges"}
)

// AllWrites returns the five writes of a whole entity, in the order above.
func AllWrites() []Write { return []Write{Insert, Replace, Merge, InsertOrReplace, InsertOrMerge} }

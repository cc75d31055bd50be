package scenario

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
)

// RuleCurrentETag is the rule whose subject is a write conditioned on the entity's current
// ETag, as any operation returned it, succeeding.
const RuleCurrentETag = "concurrency.current-etag"

// RequireCurrentETagMatched is the precondition of a spec whose writes are conditioned on
// ETags it has just read (by a query, by Get Entity), with nothing written since, and that
// judges what the writes do: err, the answer to write, is not the refusal of a failed
// condition, 412 (or 400 UpdateConditionNotSatisfied, a transaction's), which would say that
// the ETags handed out are not the entities' current ones (RuleCurrentETag).
func RequireCurrentETagMatched(f *framework.F, err error, write string) {
	ginkgo.GinkgoHelper()
	f.Requires(RuleCurrentETag, write+" conditioned on the ETags just read is not refused as a failed condition", func() {
		gomega.Expect(err).NotTo(matchers.HaveFailedWithStatusIn([]int{412}), "%s conditioned on the ETags just read", write)
		gomega.Expect(err).NotTo(matchers.HaveFailedWithStatusIn([]int{400}, "UpdateConditionNotSatisfied"), "%s conditioned on the ETags just read", write)
	})
}

package framework

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// Issue 20, item 6: a spec that passed only on a retry is listed, with its first failure.
func TestRetriedSpecsAreListed(t *testing.T) {
	r := types.Report{SpecReports: types.SpecReports{
		{ContainerHierarchyTexts: []string{"[backend azurite]", "Insert Entity"}, LeafNodeText: "stores it", LeafNodeType: types.NodeTypeIt,
			State: types.SpecStatePassed, NumAttempts: 2,
			AdditionalFailures: []types.AdditionalFailure{{Failure: types.Failure{Message: "Failure recorded during attempt 1:\nunexpected EOF"}}}},
		{ContainerHierarchyTexts: []string{"[backend azurite]", "Insert Entity"}, LeafNodeText: "fails with 409", LeafNodeType: types.NodeTypeIt,
			State: types.SpecStatePassed, NumAttempts: 1},
	}}
	got := RetriedSpecs(r)
	if len(got) != 1 || !strings.Contains(got[0], "[backend azurite] Insert Entity stores it") || !strings.Contains(got[0], "first: unexpected EOF") {
		t.Fatalf("retried specs: %q", got)
	}
}

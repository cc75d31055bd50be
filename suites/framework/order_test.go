package framework

import (
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

// A key-order precondition is left out where the profile promises no order (Cosmos DB), so
// that it never blocks a spec whose order check the profile excuses.
func TestOrderPromisedFollowsTheProfile(t *testing.T) {
	storage := &F{target: &backendTarget{cfg: &Config{}}}
	cosmos := &F{target: &backendTarget{cfg: &Config{Profile: verdict.ProfileCosmos}}}
	for _, rule := range []string{"ordering.key-order", "ordering.ascii"} {
		if !storage.OrderPromised(rule) {
			t.Errorf("the storage profile promises %s's order, but OrderPromised says no", rule)
		}
		if cosmos.OrderPromised(rule) {
			t.Errorf("the cosmos profile promises no order for %s, but OrderPromised says it does", rule)
		}
	}
	if !cosmos.OrderPromised("pagination.exactly-once") {
		t.Errorf("the cosmos profile changes nothing of pagination.exactly-once, but OrderPromised says no order")
	}
}

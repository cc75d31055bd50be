package framework

import "testing"

// One exact pattern guards `conform clean` and every delete of a run: conform's own names
// match it, near misses such as a user's "cfusers" do not (issue 11).
func TestRunTablePatternSparesNearMisses(t *testing.T) {
	for _, name := range []string{
		"cfabcd1234p1t1", "cfabcd1234p12t345", "cfabcd1234p1t1xa", "cfabcd1234p1t1MiXeDCase", "cfabcd1234b17",
		RunTableName(3, 9),
	} {
		if !IsRunTable(name) {
			t.Errorf("%q is conform's own, but does not match", name)
		}
	}
	for _, name := range []string{
		"cfusers", "cf", "cfabcd1234", "cfabcd1234p1", "cfabcd1234p1t", "cfabcd1234pxt1", "cfusersbackup1", "CFABCD1234P1T1",
		"cfABCD1234p1t1", "xcfabcd1234p1t1", "cfabcd123p1t1", "cfabcd12345p1t1", "cfabcd1234p1t1-old", "cfabcd1234b", "cfabcd1234bx1",
	} {
		if IsRunTable(name) {
			t.Errorf("%q matches the run-table pattern", name)
		}
	}
	if !IsThisRunsTable(RunTableName(1, 1)) || IsThisRunsTable("cfzzzzzzzzp1t1") && RunPrefix() != "cfzzzzzzzz" {
		t.Error("this run's tables")
	}
}

package matchers

import (
	"context"
	"strings"
	"testing"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
)

// foldingStore stores entities under their keys in lower case and answers writes with what
// it stored, as a backend that folds keys does.
type foldingStore struct{ api.Backend }

func (foldingStore) InsertEntity(_ context.Context, _ string, e api.Entity) (api.Entity, error) {
	e.PartitionKey, e.RowKey = strings.ToLower(e.PartitionKey), strings.ToLower(e.RowKey)
	return e, nil
}

// trackSpec tracks a recorder over foldingStore as the running spec's and returns the rules
// of the preconditions that matchers note meanwhile.
func trackSpec(t *testing.T) (*record.Recorder, *[]string) {
	t.Helper()
	var notes []string
	record.SetPreconditionNoter(func(rule, _, _ string) { notes = append(notes, rule) })
	rec := record.NewWithRetry(foldingStore{}, driver.DefaultRetry)
	record.Track(rec)
	t.Cleanup(func() {
		record.Track(nil)
		record.SetPreconditionNoter(func(string, string, string) {})
	})
	return rec, &notes
}

func TestKeysComeBackInAnotherCaseBlockTheComparisonByTheKeyCaseRule(t *testing.T) {
	rec, notes := trackSpec(t)
	ctx := context.Background()
	sales := api.NewEntity("Sales", "Jones", map[string]api.Value{"Age": api.Int32(40)})
	mine := api.NewEntity("p", "Row", map[string]api.Value{"V": api.Int32(1)})
	lower := api.NewEntity("p", "row", map[string]api.Value{"V": api.Int32(2)})
	for _, e := range []api.Entity{sales, mine, lower} {
		if _, err := rec.InsertEntity(ctx, "t", e); err != nil {
			t.Fatal(err)
		}
	}
	folded := api.NewEntity("sales", "jones", map[string]api.Value{"Age": api.Int32(40)})
	otherValue := api.NewEntity("sales", "jones", map[string]api.Value{"Age": api.Int32(41)})
	cases := []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		blocked bool
	}{
		{"an entity under its key in lower case", MatchEntity(sales), folded, true},
		{"the same with a value of its own", MatchEntity(sales), otherValue, false},
		{"an entity under another key the spec wrote in that case", MatchEntity(mine), lower, false},
		{"a list of entities under their keys in lower case", ConsistOfEntities(sales), []api.Entity{folded}, true},
		{"the same in order", MatchEntities(sales), []api.Entity{folded}, true},
		{"keys in lower case", ConsistOfKeys(sales.Key()), []api.Entity{folded}, true},
		{"keys in lower case, in order", HaveKeys(sales.Key()), []api.Entity{folded}, true},
		{"a wanted key in lower case among others", ContainKeys(sales.Key()), []api.Entity{folded, mine}, true},
		{"an entity's key in lower case", HaveEntityKey(sales.Key()), folded, true},
		{"a missing entity", ConsistOfKeys(sales.Key(), mine.Key()), []api.Entity{folded}, false},
		{"an entity of another key", ConsistOfKeys(sales.Key()), []api.Entity{api.NewEntity("sales", "smith", nil)}, false},
	}
	for _, c := range cases {
		*notes = nil
		ok, err := c.matcher.Match(c.actual)
		if err != nil || ok {
			t.Errorf("%s: the comparison matched (%v, %v)", c.name, ok, err)
			continue
		}
		c.matcher.FailureMessage(c.actual)
		blocked := len(*notes) == 1 && (*notes)[0] == RuleKeyCase
		if blocked != c.blocked {
			t.Errorf("%s: noted %v; want blocked by %s: %v", c.name, *notes, RuleKeyCase, c.blocked)
		}
	}
}

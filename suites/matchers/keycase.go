package matchers

import (
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/record"
)

// An entity read back to compare with what a spec stored also relies on its keys coming
// back as they were written, letter case included: the subject of RuleKeyCase (EVIDENCE.md
// 1.2), not of the rule that stored or read it. A comparison whose every difference is an
// entity that came back under its wanted key in another letter case, a key the running spec
// never wrote (record.KeyMayHaveBeenWrittenByRunningSpec), with nothing else missing or
// extra (and its values as wanted, or come back in another form of themselves), blocks the
// spec by RuleKeyCase rather than failing its own rule. An entity that came back under a key
// the spec did write in that case (another entity of its own), or any other difference,
// fails the spec's rule as before.

// RuleKeyCase is the rule whose subject is keys keeping their letter case: an entity reads
// back under the keys it was written with, and keys that differ only in case name distinct
// entities.
const RuleKeyCase = "entities.key.case-sensitive"

// keyCaseStep is the step a key that came back in another letter case fails.
const keyCaseStep = "read the entities back under the keys they were written with, letter case included"

// caseFolded reports whether got is want in another letter case (Unicode simple case
// folding) under which the running spec wrote no entity.
func caseFolded(want, got api.Key) bool {
	return want != got && strings.EqualFold(want.PartitionKey, got.PartitionKey) && strings.EqualFold(want.RowKey, got.RowKey) &&
		!record.KeyMayHaveBeenWrittenByRunningSpec(got)
}

// keysCaseRule returns RuleKeyCase when got holds the keys of want, each once, and every one
// that differs is a wanted key come back in another letter case (caseFolded); inOrder also
// requires the order of want. It returns false when any difference is another.
func keysCaseRule(want, got []api.Key, inOrder bool) (string, bool) {
	if len(want) != len(got) {
		return "", false
	}
	if inOrder {
		folded := false
		for i := range want {
			switch {
			case want[i] == got[i]:
			case caseFolded(want[i], got[i]):
				folded = true
			default:
				return "", false
			}
		}
		return RuleKeyCase, folded
	}
	pairs, ok := pairByKey(want, got)
	if !ok {
		return "", false
	}
	for i, g := range pairs {
		if g != want[i] {
			return RuleKeyCase, true
		}
	}
	return "", false
}

// pairByKey pairs each key of want with the key of got it came back as: itself, else one in
// another letter case (caseFolded), the first such in got. It returns, in the order of want,
// the key of got paired with each, and false when a wanted key has no partner or got holds
// a key left over or twice.
func pairByKey(want, got []api.Key) ([]api.Key, bool) {
	if len(want) != len(got) {
		return nil, false
	}
	// taken holds each key of got, true once paired.
	taken := make(map[api.Key]bool, len(got))
	for _, g := range got {
		if _, twice := taken[g]; twice {
			return nil, false
		}
		taken[g] = false
	}
	out := make([]api.Key, len(want))
	var unpaired []int
	for i, w := range want {
		if done, present := taken[w]; present && !done {
			taken[w], out[i] = true, w
			continue
		}
		unpaired = append(unpaired, i)
	}
	for _, i := range unpaired {
		found := false
		for _, g := range got {
			if !taken[g] && caseFolded(want[i], g) {
				taken[g], out[i], found = true, g, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// noteKeyCaseFault announces, for a comparison about to fail with message, that RuleKeyCase
// blocks it (rule; "" when another rule or none does).
func noteKeyCaseFault(rule, message string) string {
	if rule == RuleKeyCase {
		record.NotePrecondition(rule, keyCaseStep, message)
	}
	return message
}

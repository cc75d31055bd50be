package matchers

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver/record"
)

// An entity read back to compare with what a spec stored relies on every stored value
// coming back as its EDM type with its value: the subject of that type's round-trip rule
// (types.<type>.round-trip, EVIDENCE.md 1.5), not of the rule that stored or read it. A
// comparison whose every difference is a value that came back in another form of itself
// (an Edm.Int32 as an Edm.Int64 of the same number, an Edm.Boolean as 0 or 1, an Edm.Int64
// as the string of its digits, an Edm.DateTime cut to milliseconds) that the running spec
// never wrote to that entity, where the expected value is one the spec sent, blocks the spec
// by that round-trip rule (framework.NoteFailedPrecondition, reached through record.NotePrecondition) rather than failing its own. A
// value the spec did write there (the old value a type change should have replaced), an
// expected value the spec never sent (one a rule derives, as a Double zero from -0) or any
// other difference fails the spec's rule as before. Likewise an entity that comes back with
// nulls the spec never sent it, for properties it sent to other entities, is blocked by the
// rule that each entity reads back with its own properties (RuleOwnProperties).

// roundTripStep is the step a round-trip fault fails.
const roundTripStep = "read back the stored values as their EDM types, each entity with its own properties"

// RuleOwnProperties is the rule whose subject is each entity of a table reading back with
// exactly its own set of properties, not with nulls for the properties of others.
const RuleOwnProperties = "entities.schema.heterogeneous"

// roundTripRule returns the rule a comparison that differs from want only by round-trip
// faults is blocked by, and false when any difference is another (EntityDiff's differences).
// Keys come back in another letter case (keycase.go) are such a fault too, and name
// RuleKeyCase first.
func roundTripRule(want, got api.Entity) (string, bool) {
	rule := ""
	if want.Key() != got.Key() {
		if !caseFolded(want.Key(), got.Key()) {
			return "", false
		}
		rule = RuleKeyCase
	}
	for _, n := range api.UnionPropertyNames(want, got) {
		w, inWant := want.Properties[n]
		g, inGot := got.Properties[n]
		switch {
		case !inGot:
			return "", false
		case !inWant:
			if written, tracked := record.WrittenByRunningSpec(n); tracked && !written {
				continue
			}
			// A null the spec never sent to this entity, of a property it sent to others:
			// the entity came back with another's set of properties.
			if !g.Null || record.MayHaveBeenWrittenByRunningSpec(want.Key(), n, g) {
				return "", false
			}
			if rule == "" {
				rule = RuleOwnProperties
			}
			continue
		case w.Equal(g):
			continue
		}
		r, ok := valueRoundTripRule(w, g)
		if !ok || !record.SentByRunningSpec(n, w) || record.MayHaveBeenWrittenByRunningSpec(want.Key(), n, g) {
			return "", false
		}
		if rule == "" {
			rule = r
		}
	}
	return rule, rule != ""
}

// valueRoundTripRule returns the round-trip rule of want's type when got is want's value in
// another form (another numeric type, 0 or 1 for a Boolean, the text of the value as a
// String, a DateTime cut to a coarser precision).
func valueRoundTripRule(want, got api.Value) (string, bool) {
	if want.Null || got.Null || !want.Type.Valid() {
		return "", false
	}
	if !sameValueInAnotherForm(want, got) {
		return "", false
	}
	id := RoundTripRule(want.Type)
	return id, id != ""
}

// RoundTripRule returns the rule whose subject is a value of type t coming back as itself
// (types.<type>.round-trip), "" for no such rule.
func RoundTripRule(t api.EdmType) string {
	id := "types." + strings.ToLower(strings.TrimPrefix(t.String(), "Edm.")) + ".round-trip"
	if _, ok := spec.LookupRule(id); !ok {
		return ""
	}
	return id
}

func sameValueInAnotherForm(want, got api.Value) bool {
	if got.Type == api.EdmString {
		for _, text := range textForms(want) {
			if got.Str == text {
				return true
			}
		}
		return false
	}
	switch want.Type {
	case api.EdmInt32, api.EdmInt64:
		switch got.Type {
		case api.EdmInt32, api.EdmInt64:
			return want.Type != got.Type && want.Int() == got.Int()
		case api.EdmDouble:
			return float64(want.Int()) == got.Float()
		}
	case api.EdmDouble:
		// A -0 that comes back as the integer 0 lost its sign: not the same value.
		return (got.Type == api.EdmInt32 || got.Type == api.EdmInt64) && float64(got.Int()) == want.Float() && !math.Signbit(want.Float())
	case api.EdmBoolean:
		if got.Type == api.EdmInt32 || got.Type == api.EdmInt64 {
			return want.Bool && got.Int() == 1 || !want.Bool && got.Int() == 0
		}
	case api.EdmDateTime:
		if got.Type == api.EdmDateTime {
			for _, unit := range []time.Duration{time.Microsecond, time.Millisecond, time.Second} {
				if cut := want.Time().Truncate(unit); !cut.Equal(want.Time()) && cut.Equal(got.Time()) {
					return true
				}
			}
		}
	}
	return false
}

// textForms returns the ways v reads as text.
func textForms(v api.Value) []string {
	switch v.Type {
	case api.EdmInt32, api.EdmInt64:
		return []string{strconv.FormatInt(v.Int(), 10)}
	case api.EdmDouble:
		return []string{strconv.FormatFloat(v.Float(), 'g', -1, 64)}
	case api.EdmBoolean:
		return []string{strconv.FormatBool(v.Bool)}
	case api.EdmDateTime:
		return []string{api.FormatDateTime(v.Time()), api.FormatDateTime7(v.Time())}
	case api.EdmGuid:
		return []string{v.Str, strings.ToLower(v.Str), strings.ToUpper(v.Str)}
	case api.EdmBinary:
		return []string{base64.StdEncoding.EncodeToString(v.Bin())}
	}
	return nil
}

// noteRoundTripFault announces, for a comparison about to fail with message, the
// round-trip rule that blocks it (rule; "" when none).
func noteRoundTripFault(rule, message string) string {
	switch rule {
	case "":
	case RuleKeyCase:
		noteKeyCaseFault(rule, message)
	default:
		record.NotePrecondition(rule, roundTripStep, message)
	}
	return message
}

// entitiesRoundTripRule is roundTripRule over entities paired by key (pairByKey: a key come
// back in another letter case pairs with the wanted one): every wanted entity came back
// once, nothing else did, and each that differs differs only by round-trip faults.
func entitiesRoundTripRule(want, got []api.Entity) (string, bool) {
	paired, ok := pairByKey(Keys(want), Keys(got))
	if !ok {
		return "", false
	}
	byKey := make(map[api.Key]api.Entity, len(got))
	for _, g := range got {
		byKey[g.Key()] = g
	}
	rule := ""
	for i, w := range want {
		g := byKey[paired[i]]
		if len(EntityDiff(w, g)) == 0 {
			continue
		}
		r, ok := roundTripRule(w, g)
		if !ok {
			return "", false
		}
		if rule == "" || r == RuleKeyCase {
			rule = r
		}
	}
	return rule, rule != ""
}

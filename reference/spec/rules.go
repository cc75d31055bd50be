package spec

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Level is a rule's requirement level, in RFC 2119 words.
type Level string

// The requirement levels. A MAY rule never fails: its spec records which of the allowed
// behaviours the backend chose.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
)

// Area groups rules; each area is one spec package under suites/.
type Area string

// The areas, one spec package each.
const (
	AreaTables        Area = "tables"
	AreaEntities      Area = "entities"
	AreaTypes         Area = "types"
	AreaLimits        Area = "limits"
	AreaQuery         Area = "query"
	AreaOrdering      Area = "ordering"
	AreaPagination    Area = "pagination"
	AreaModification  Area = "modification"
	AreaConcurrency   Area = "concurrency"
	AreaBatch         Area = "batch"
	AreaPatterns      Area = "patterns"
	AreaRelationships Area = "relationships"
	AreaAuth          Area = "auth"
	AreaParallel      Area = "parallel"
	AreaProtocol      Area = "protocol"
)

// Feature names the part of the API a rule belongs to; a verdict of "conforms to core"
// (suites/verdict) rests on it. Core rules apply to every Table implementation: tables,
// entities and their keys, properties and types, queries, ordering and paging, updates
// and ETags, the REST protocol itself (status codes, headers, error bodies, the JSON
// formats) and Shared Key authorization; an application using any SDK meets all of them.
// The others are extended features, each an operation or resource of its own that an
// implementation may lack without breaking the single-entity operations: entity group
// transactions (batch, also the patterns and relationships that rely on one), service
// SAS and account SAS, table ACLs, and the account-wide service properties, statistics
// and CORS (FService). The REST protocol is core: every call goes through it.
type Feature string

// The features.
const (
	Core   Feature = "core"
	FBatch Feature = "batch"
	FSAS   Feature = "sas"
	FACL   Feature = "table-acl"
)

// Rule is one documented behaviour that a spec checks.
type Rule struct {
	// ID is stable and unique: lower-case words joined by dots, e.g. "entity.insert.conflict".
	ID string
	// Level is MUST, SHOULD or MAY.
	Level Level
	// Area is the spec package that checks the rule.
	Area Area
	// Feature is Core or the extended feature the rule belongs to (empty means Core).
	Feature Feature
	// Text states the rule in one sentence.
	Text string
	// Source is the documentation URL, with its section anchor.
	Source string
	// Sections lists the design-guide section anchors the rule covers (coverage map).
	Sections []string
	// Evidence lists the facts the rule rests on, each with its strength (docs/EVIDENCE.md);
	// empty means the one fact its Source states (Facts). A MUST rests only on traffic or
	// documentation (LevelOutrunsEvidence).
	Evidence []Fact
	// Cosmos is what Cosmos DB for Table does about the rule (cosmos.go): the same as
	// Storage, a recorded or documented different answer, not supported, or not promised.
	// It is filled in when the rule is looked up; rules files never set it.
	Cosmos Cosmos
	// Unbreakable, when set, says why no wrong-backend decorator can break this rule (from
	// the list in unbreakable.go; a rule declares none itself).
	Unbreakable string
}

// FeatureOrCore returns r.Feature, or Core when it is empty.
func (r Rule) FeatureOrCore() Feature {
	if r.Feature == "" {
		return Core
	}
	return r.Feature
}

var ruleIDPattern = regexp.MustCompile(`^[a-z0-9]+(?:[.-][a-z0-9]+)+$`)

var catalogue = map[string]Rule{}

// AddRules adds rules to the catalogue. It is called from init functions of this package,
// one file per area, and panics on a malformed or duplicate rule: the catalogue is checked
// when the program starts.
func AddRules(rules ...Rule) {
	for _, r := range rules {
		if err := r.validate(); err != nil {
			panic("spec: " + err.Error())
		}
		if r.Cosmos.Kind != "" {
			panic("spec: rule " + r.ID + ": its Cosmos expectation belongs in the table of cosmos.go")
		}
		if r.Unbreakable != "" {
			panic("spec: rule " + r.ID + ": its Unbreakable reason belongs in the list of unbreakable.go")
		}
		if _, dup := catalogue[r.ID]; dup {
			panic("spec: rule registered twice: " + r.ID)
		}
		catalogue[r.ID] = r
	}
}

func (r Rule) validate() error {
	switch {
	case !ruleIDPattern.MatchString(r.ID):
		return fmt.Errorf("rule id %q: want lower-case words joined by dots", r.ID)
	case r.Level != Must && r.Level != Should && r.Level != May:
		return fmt.Errorf("rule %s: level %q", r.ID, r.Level)
	case r.Area == "":
		return fmt.Errorf("rule %s: no area", r.ID)
	case strings.TrimSpace(r.Text) == "":
		return fmt.Errorf("rule %s: no text", r.ID)
	case !strings.HasPrefix(r.Source, "https://"):
		return fmt.Errorf("rule %s: source %q is not a URL", r.ID, r.Source)
	}
	for _, f := range r.Evidence {
		if f.Cite == "" || !f.Strength.Valid() {
			return fmt.Errorf("rule %s: fact %q has no citation or an unknown strength %q", r.ID, f.Cite, f.Strength)
		}
	}
	return nil
}

// LookupRule returns the rule with the given id.
func LookupRule(id string) (Rule, bool) {
	r, ok := catalogue[id]
	return withCosmos(withUnbreakable(r)), ok
}

// Rules returns the whole catalogue ordered by area, then id.
func Rules() []Rule {
	out := make([]Rule, 0, len(catalogue))
	for _, r := range catalogue {
		out = append(out, withCosmos(withUnbreakable(r)))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Area != out[j].Area {
			return out[i].Area < out[j].Area
		}
		return out[i].ID < out[j].ID
	})
	return out
}

package spec

import (
	"fmt"
	"regexp"
	"strings"
)

// Strength is how strong a fact a rule rests on is, in the words of docs/EVIDENCE.md.
type Strength string

// The strengths, strongest first. A MUST rule rests only on Traffic or Doc (SupportsMust);
// where a fact is SDK or Open the rule is a SHOULD or a MAY, or its spec accepts every
// answer the evidence allows and records the one the backend gave.
const (
	// Traffic: seen in recorded requests and answers of Storage or Cosmos DB (SDK test
	// recordings), or a live answer quoted in a public issue.
	Traffic Strength = "traffic"
	// Doc: Microsoft's documentation says so.
	Doc Strength = "doc"
	// SDK: a Microsoft client, tested against the live service, relies on it: what the
	// client sends and that the service took it, not the server's rule.
	SDK Strength = "sdk"
	// Open: inferred, seen only in an emulator or a third party, contradicted, or never
	// observed.
	Open Strength = "open"
)

var strengthRank = map[Strength]int{Traffic: 3, Doc: 2, SDK: 1, Open: 0}

// SupportsMust reports whether a fact of strength s may carry a MUST.
func (s Strength) SupportsMust() bool { return s == Traffic || s == Doc }

// Valid reports whether s is one of the strengths.
func (s Strength) Valid() bool { _, ok := strengthRank[s]; return ok }

// Fact is one fact a rule rests on: the entry of docs/EVIDENCE.md that states it, and how
// strong it is. The strength is the entry's own (its "Strength:" line); the tests compare
// the two exactly.
type Fact struct {
	// Cite names the entry: "EVIDENCE.md <section>" for a numbered section ("EVIDENCE.md
	// 3.3") or the entry's anchor "E-<slug>" ("E-top-zero"). A URL is no entry: where a rule
	// names no fact, Facts gives its Source, whose strength is open.
	Cite string `json:"cite"`
	// Strength is the fact's strength.
	Strength Strength `json:"strength"`
	// Note says what the fact settles, where the rule rests on more than one.
	Note string `json:"note,omitempty"`
	// Recorded marks a fact the rule's spec does not assert: it records what the backend
	// answered (Choice). Such a fact does not bound the rule's level.
	Recorded bool `json:"recorded,omitempty"`
}

// evidenceCitePrefix starts the citation of a numbered section of docs/EVIDENCE.md.
const evidenceCitePrefix = "EVIDENCE.md "

// Entry returns the id of the docs/EVIDENCE.md entry f cites ("3.3", "E-top-zero"), or ""
// when f cites something else (a URL).
func (f Fact) Entry() string {
	if sec, ok := strings.CutPrefix(f.Cite, evidenceCitePrefix); ok && sectionID.MatchString(sec) {
		return sec
	}
	if anchorID.MatchString(f.Cite) {
		return f.Cite
	}
	return ""
}

var (
	// sectionID is the id of a numbered section of docs/EVIDENCE.md: "3", "3.3".
	sectionID = regexp.MustCompile(`^\d+(?:\.\d+)?$`)
	// anchorID is the id of an anchored entry of docs/EVIDENCE.md: "E-top-zero".
	anchorID = regexp.MustCompile(`^E-[a-z0-9]+(?:-[a-z0-9]+)*$`)
)

// evidenceFact returns the fact that the docs/EVIDENCE.md entry id states, with the entry's
// strength: a section number ("3.3") or an anchor ("E-top-zero").
func evidenceFact(s Strength, id string, note ...string) Fact {
	cite := id
	if sectionID.MatchString(id) {
		cite = evidenceCitePrefix + id
	}
	return Fact{Cite: cite, Strength: s, Note: strings.Join(note, " ")}
}

// doc, traffic, sdk and open name the entry of docs/EVIDENCE.md a rule rests on, with the
// strength that entry's "Strength:" line gives; note, where given, says what the fact
// settles.
func doc(id string, note ...string) Fact     { return evidenceFact(Doc, id, note...) }
func traffic(id string, note ...string) Fact { return evidenceFact(Traffic, id, note...) }
func sdk(id string, note ...string) Fact     { return evidenceFact(SDK, id, note...) }
func open(id string, note ...string) Fact    { return evidenceFact(Open, id, note...) }

func (f Fact) String() string {
	s := fmt.Sprintf("%s (%s)", f.Cite, f.Strength)
	if f.Recorded {
		s = fmt.Sprintf("%s (%s, recorded)", f.Cite, f.Strength)
	}
	if f.Note != "" {
		s += ": " + f.Note
	}
	return s
}

// Facts returns the facts r rests on: its Evidence, or else its Source, which names no entry
// of docs/EVIDENCE.md and so is open (a rule below MUST may rest on it; a MUST may not).
func (r Rule) Facts() []Fact {
	if len(r.Evidence) > 0 {
		return r.Evidence
	}
	return []Fact{{Cite: r.Source, Strength: Open}}
}

// EvidenceStrength is the strength of the weakest fact r asserts (a fact it only records
// does not count): a rule is no stronger than any fact it asserts.
func (r Rule) EvidenceStrength() Strength {
	weakest := Traffic
	for _, f := range r.Facts() {
		if !f.Recorded && strengthRank[f.Strength] < strengthRank[weakest] {
			weakest = f.Strength
		}
	}
	return weakest
}

// LevelOutrunsEvidence says why r's level is stronger than its evidence allows, or "" when
// it is not: a MUST names at least one fact it asserts, each fact names an entry of
// docs/EVIDENCE.md, and every fact it asserts is Traffic or Doc. No strength is read from a
// URL.
func (r Rule) LevelOutrunsEvidence() string {
	if r.Level != Must {
		return ""
	}
	var weak []string
	asserted := 0
	for _, f := range r.Evidence {
		switch {
		case f.Entry() == "":
			weak = append(weak, f.String()+", which names no entry of docs/EVIDENCE.md")
		case f.Recorded:
		case !f.Strength.SupportsMust():
			weak = append(weak, f.String())
		default:
			asserted++
		}
	}
	if asserted == 0 && len(weak) == 0 {
		return fmt.Sprintf("rule %s is a MUST but names no fact it asserts (Rule.Evidence)", r.ID)
	}
	if len(weak) == 0 {
		return ""
	}
	return fmt.Sprintf("rule %s is a MUST but rests on %s", r.ID, strings.Join(weak, "; "))
}

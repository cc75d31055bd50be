package spec

import (
	"fmt"
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

// Fact is one fact a rule rests on: where docs/EVIDENCE.md (or the source itself) states
// it, and how strong it is.
type Fact struct {
	// Cite is "EVIDENCE.md <section>", an anchor "E-<slug>", or a source URL.
	Cite string `json:"cite"`
	// Strength is the fact's strength.
	Strength Strength `json:"strength"`
	// Note says what the fact settles, where the rule rests on more than one.
	Note string `json:"note,omitempty"`
	// Recorded marks a fact the rule's spec does not assert: it records what the backend
	// answered (Choice). Such a fact does not bound the rule's level.
	Recorded bool `json:"recorded,omitempty"`
}

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

// sourceStrength is the strength of the sources rules cite, where the source alone says
// it: Microsoft's documentation is Doc; recordings and quoted live answers are Traffic; an
// SDK's test code is SDK. A source not listed here is Open until its strength is stated.
var sourceStrength = map[string]Strength{
	SrcTraffic:                Traffic,
	SrcLiveStringEdge:         Traffic,
	SrcTopZero:                Traffic,
	SrcDateTimeNoZone:         Traffic,
	SrcPythonEncoderTest:      Traffic, // its live run's recordings (EVIDENCE.md 14)
	SrcGoAnnotatedEntityTest:  Traffic, // its recordings (E-datetime-extra-digits)
	SrcLegacyNodePayload:      Traffic,
	SrcDoubleOutOfRange:       Traffic, // a live answer quoted in the issue
	SrcDateTimeEmpty:          Traffic, // a live answer quoted in the issue
	SrcEntityTooLargeLive:     Traffic, // Azurite's test of Storage's live answer
	srcPythonACLRecording:     Traffic,
	srcPythonACLMissingRecord: Traffic,
	srcPythonACLPartial:       Traffic,
	SrcGoSDKTests:             Traffic, // its recordings (GOREC)
	srcGoTableClientTests:     Traffic, // its recordings (GOREC)
	srcLegacyNodeSDK:          SDK,
	SrcVersionInvalid:         Traffic, // quotes a live answer; see E-version-invalid for what it covers
}

// StrengthOfSource returns the strength a source carries by itself (sourceStrength):
// Microsoft's documentation pages are Doc.
func StrengthOfSource(src string) Strength {
	base, _, _ := strings.Cut(src, "#")
	if s, ok := sourceStrength[src]; ok {
		return s
	}
	if s, ok := sourceStrength[base]; ok {
		return s
	}
	if strings.HasPrefix(src, "https://learn.microsoft.com/") {
		return Doc
	}
	if strings.HasPrefix(src, "https://github.com/Azure/") && strings.Contains(src, "/recordings/") {
		return Traffic // an Azure SDK's recording of its live tests
	}
	return Open
}

// Facts returns the facts r rests on: its Evidence, or else the one fact its Source states
// (StrengthOfSource).
func (r Rule) Facts() []Fact {
	if len(r.Evidence) > 0 {
		return r.Evidence
	}
	return []Fact{{Cite: r.Source, Strength: StrengthOfSource(r.Source)}}
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
// it is not: a MUST needs Traffic or Doc for every fact it asserts.
func (r Rule) LevelOutrunsEvidence() string {
	if r.Level != Must {
		return ""
	}
	var weak []string
	for _, f := range r.Facts() {
		if !f.Recorded && !f.Strength.SupportsMust() {
			weak = append(weak, f.String())
		}
	}
	if len(weak) == 0 {
		return ""
	}
	return fmt.Sprintf("rule %s is a MUST but rests on %s", r.ID, strings.Join(weak, "; "))
}

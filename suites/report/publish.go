package report

import (
	"time"

	"github.com/tableconform/conform/suites/verdict"
)

// PublishedSchema identifies the format of conformance-report.yaml (docs/CONFORMANCE-REPORT.md).
// A change that removes or renames a field, or changes a field's meaning, gets a new
// version; fields may be added within one.
const PublishedSchema = "conform.tableconform.io/v1"

// FilePublished is the name conform report --publish writes.
const FilePublished = "conformance-report.yaml"

// Published is the small, stable document an implementation publishes about one run of
// conform against it: who was tested, how, and per area and rule level how many rules
// passed, failed and were skipped. It is derived from report.json (Publish); the field
// order is the order of the document.
type Published struct {
	APIVersion     string                `yaml:"apiVersion" json:"apiVersion"`
	Kind           string                `yaml:"kind" json:"kind"`
	Date           time.Time             `yaml:"date" json:"date"`
	ConformVersion string                `yaml:"conformVersion" json:"conformVersion"`
	Implementation PublishedImpl         `yaml:"implementation" json:"implementation"`
	Endpoint       PublishedEndpoint     `yaml:"endpoint" json:"endpoint"`
	Profile        string                `yaml:"profile" json:"profile"`
	Filter         string                `yaml:"labelFilter,omitempty" json:"labelFilter,omitempty"`
	Verdict        PublishedVerdict      `yaml:"verdict" json:"verdict"`
	Levels         map[string]RuleCounts `yaml:"levels" json:"levels"`
	Areas          []PublishedArea       `yaml:"areas" json:"areas"`
}

// PublishedImpl names the implementation under test.
type PublishedImpl struct {
	Name    string `yaml:"name" json:"name"`
	Version string `yaml:"version" json:"version"`
}

// PublishedEndpoint says what kind of endpoint was tested and how conform talked to it;
// never its address or credentials.
type PublishedEndpoint struct {
	// Kind is "reference", "reference-http", "azurite", "azurite-docker", "mutant" or
	// "endpoint" (any other Table endpoint).
	Kind string `yaml:"kind" json:"kind"`
	// Driver is "inproc", "rest" (raw HTTP) or "sdk" (the official Go SDK).
	Driver     string `yaml:"driver" json:"driver"`
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
}

// PublishedVerdict is the verdict as data and as its sentence.
type PublishedVerdict struct {
	Kind     string `yaml:"kind" json:"kind"`
	Sentence string `yaml:"sentence" json:"sentence"`
}

// RuleCounts counts rules by how they ended: Passed (every spec that ran passed, or
// answered as the profile documents), Failed (an outcome that counts against the
// backend, expected failures included: a baseline is the project's, not the
// implementation's excuse), Skipped (not judged: skipped, not run, blocked, no answer,
// interrupted).
type RuleCounts struct {
	Passed  int `yaml:"passed" json:"passed"`
	Failed  int `yaml:"failed" json:"failed"`
	Skipped int `yaml:"skipped" json:"skipped"`
}

// PublishedArea is one area's counts per rule level ("MUST", "SHOULD", "MAY").
type PublishedArea struct {
	Name   string                `yaml:"name" json:"name"`
	Levels map[string]RuleCounts `yaml:"levels" json:"levels"`
}

// publishedBucket says how a rule's outcome counts: from the legend (Outcomes), an outcome
// against the backend is a failure, one that observed nothing is skipped, the rest passed.
func publishedBucket(o verdict.Outcome) func(*RuleCounts) {
	info := o.Describe()
	switch {
	case info.AgainstBackend:
		return func(c *RuleCounts) { c.Failed++ }
	case info.NoAnswer || info.Outcome == "":
		return func(c *RuleCounts) { c.Skipped++ }
	}
	return func(c *RuleCounts) { c.Passed++ }
}

// Publish derives backend bi's published document from r. name and version, when not
// empty, replace the backend's name and the version it reported.
func Publish(r Report, bi int, name, version string) Published {
	b := r.Backends[bi]
	p := Published{APIVersion: PublishedSchema, Kind: "ConformanceReport", Date: b.Date.UTC(), ConformVersion: r.Conform,
		Implementation: PublishedImpl{Name: b.Name, Version: b.Version},
		Endpoint:       PublishedEndpoint{Kind: b.Kind, Driver: b.Driver, APIVersion: b.APIVersion},
		Profile:        profileOf(b.Profile), Filter: b.Coverage.Filter,
		Verdict: PublishedVerdict{Kind: string(b.VerdictKind), Sentence: b.Verdict},
		Levels:  map[string]RuleCounts{}}
	if p.Date.IsZero() {
		p.Date = r.Generated.UTC()
	}
	if name != "" {
		p.Implementation.Name = name
	}
	if version != "" {
		p.Implementation.Version = version
	}
	areas := map[string]map[string]RuleCounts{}
	var order []string
	for _, row := range r.Rules {
		if areas[row.Area] == nil {
			areas[row.Area] = map[string]RuleCounts{}
			order = append(order, row.Area)
		}
		add := publishedBucket(row.Cells[bi].Outcome)
		c := areas[row.Area][row.Level]
		add(&c)
		areas[row.Area][row.Level] = c
		all := p.Levels[row.Level]
		add(&all)
		p.Levels[row.Level] = all
	}
	for _, a := range order {
		p.Areas = append(p.Areas, PublishedArea{Name: a, Levels: areas[a]})
	}
	return p
}

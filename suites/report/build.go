package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

// Meta is what a report says about the run that made it.
type Meta struct {
	ConformVersion string
	Command        string
	Generated      time.Time
}

// Build derives the report from the raw runs of each backend and the rule catalogue.
// Runs of the same backend name are merged; the later run wins per spec.
func Build(runs []Run, rules []spec.Rule, meta Meta) Report {
	rep := Report{Schema: Schema, Conform: meta.ConformVersion, Generated: meta.Generated.UTC(), Command: meta.Command, Legend: Legend}
	cells := map[string][]Cell{}
	byID := map[string]spec.Rule{}
	for _, r := range rules {
		cells[r.ID] = nil
		byID[r.ID] = r
	}
	for bi, run := range runs {
		b := Backend{Info: run.Backend, Profile: profileOf(run.Profile), Date: run.Ginkgo.StartTime.UTC(), Command: run.Command,
			StartError: run.StartError}
		if b.Name == "" {
			b.Name = fmt.Sprintf("backend%d", bi+1)
		}
		perRule := map[string]*Cell{}
		for _, s := range run.Ginkgo.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			rule, ok := byID[ruleOfSpec(s)]
			if !ok {
				// A spec that did not run carries its rule only as a label.
				for _, l := range s.Labels() {
					if r, found := byID[l]; found {
						rule, ok = r, true
					}
				}
			}
			if !ok {
				continue
			}
			ruleID := rule.ID
			res := classify(s, rule, b.Profile)
			count(&b.Counts, res)
			c := perRule[ruleID]
			if c == nil {
				c = &Cell{Outcome: NotRun}
				perRule[ruleID] = c
			}
			c.Specs = append(c.Specs, res)
			if Worse(res.Outcome, c.Outcome) {
				c.Outcome = res.Outcome
			}
		}
		for id := range cells {
			c := perRule[id]
			if c == nil {
				c = &Cell{Outcome: NotRun}
			}
			sort.SliceStable(c.Specs, func(i, j int) bool { return c.Specs[i].Text < c.Specs[j].Text })
			cells[id] = append(cells[id], *c)
		}
		b.Verdict, b.FailingFeatures = verdict(rules, cells, bi, run.StartError != "")
		b.BaselineMet = run.StartError == "" && run.Ginkgo.SuiteSucceeded
		rep.Backends = append(rep.Backends, b)
	}
	for _, r := range rules {
		rep.Rules = append(rep.Rules, RuleRow{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()),
			Text: r.Text, Source: r.Source, CosmosDifference: r.CosmosDifference, Cells: cells[r.ID]})
	}
	return rep
}

func profileOf(p string) string {
	if p == "" {
		return "storage"
	}
	return p
}

func ruleOfSpec(s types.SpecReport) string {
	for _, e := range s.ReportEntries {
		if e.Name == framework.EntryRule {
			var r framework.RuleEntry
			if json.Unmarshal([]byte(entryJSON(e)), &r) == nil {
				return r.ID
			}
		}
	}
	return ""
}

// entryJSON returns an entry's value as JSON, whether the report was decoded from a file or
// is the live one.
func entryJSON(e types.ReportEntry) string {
	if e.Value.AsJSON != "" {
		return e.Value.AsJSON
	}
	b, err := json.Marshal(e.Value.GetRawValue())
	if err != nil {
		return ""
	}
	return string(b)
}

func entries(s types.SpecReport, name string) []string {
	var out []string
	for _, e := range s.ReportEntries {
		if e.Name == name {
			out = append(out, entryJSON(e))
		}
	}
	return out
}

// classify decides one spec's outcome and gathers its evidence.
func classify(s types.SpecReport, rule spec.Rule, profile string) SpecResult {
	res := SpecResult{Text: framework.SpecText(s), RunTime: s.RunTime.Seconds()}
	for _, c := range entries(s, framework.EntryChoice) {
		var ch framework.Choice
		if json.Unmarshal([]byte(c), &ch) == nil {
			res.Choices = append(res.Choices, ch.What+": "+ch.Chosen)
		}
	}
	for _, h := range entries(s, framework.EntryHistory) {
		var text string
		if json.Unmarshal([]byte(h), &text) == nil {
			res.History = text
		}
	}
	msg := s.Failure.Message
	if s.State.Is(types.SpecStateFailureStates) || s.State == types.SpecStateSkipped {
		res.Failure = msg
		if s.Failure.Location.FileName != "" {
			res.Location = fmt.Sprintf("%s:%d", shortPath(s.Failure.Location.FileName), s.Failure.Location.LineNumber)
		}
	}
	switch {
	case s.State == types.SpecStatePassed:
		res.Outcome = Pass
		if exp := entries(s, framework.EntryExpected); len(exp) > 0 {
			var e framework.ExpectedEntry
			_ = json.Unmarshal([]byte(exp[0]), &e)
			res.Outcome, res.Evidence, res.Failure = ExpectedFail, e.Evidence, e.Failure
		} else if len(res.Choices) > 0 {
			res.Outcome = Info
		}
	case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
		res.Outcome, res.SkipReason, res.Failure = Skipped, skipReason(msg), ""
	case s.State == types.SpecStateFailed && len(s.AdditionalFailures) == 0 && strings.Contains(msg, driver.ErrNotExpressible.Error()):
		// The driver's client could not send the request (SPEC.md 12): not the backend's.
		res.Outcome, res.SkipReason, res.Failure = Skipped, "the driver cannot send this request: "+notExpressibleCause(msg), ""
	case strings.Contains(msg, "conform:unexpected-pass"):
		res.Outcome = UnexpectedPass
	case s.State != types.SpecStateFailed || isTransport(msg):
		res.Outcome = Error
	case profile == "cosmos" && rule.CosmosDifference != "":
		res.Outcome, res.Difference = DocumentedDiff, rule.CosmosDifference
	default:
		res.Outcome = Fail
	}
	return res
}

func isTransport(msg string) bool {
	for _, m := range []string{"conform:transport", "transport error", "conform:backend-unavailable", "context deadline exceeded"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// notExpressibleCause is the line of msg that names what the driver could not send.
func notExpressibleCause(msg string) string {
	for _, line := range strings.Split(msg, "\n") {
		if strings.Contains(line, driver.ErrNotExpressible.Error()) {
			if i := strings.LastIndex(line, "): "); i >= 0 && strings.Contains(line[:i], "conform:transport") {
				line = line[i+3:]
			}
			return strings.TrimSpace(strings.ReplaceAll(line, " ("+driver.ErrNotExpressible.Error()+")", ""))
		}
	}
	return strings.TrimSpace(msg)
}

func skipReason(msg string) string {
	if msg == "" {
		return "left out by the label filter or the run's selection"
	}
	return msg
}

func shortPath(p string) string {
	if i := strings.Index(p, "/suites/"); i >= 0 {
		return p[i+1:]
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func count(c *Counts, res SpecResult) {
	if res.Outcome == Skipped {
		if res.SkipReason == skipReason("") {
			c.SkippedByFilter++
		} else {
			c.Selected++
			c.SkippedCapability++
		}
		return
	}
	c.Selected++
	c.Run++
	switch res.Outcome {
	case Pass:
		c.Passed++
	case Info:
		c.Passed++
		c.Information++
	case Fail:
		c.Failed++
	case Error:
		c.Errors++
	case ExpectedFail:
		c.ExpectedFailures++
	case UnexpectedPass:
		c.UnexpectedPasses++
	case DocumentedDiff:
		c.DocumentedDiffs++
	}
}

// verdict says whether backend bi conforms: every MUST rule passes ("conforms"), every core
// MUST rule passes ("conforms to core"), or not. Documented differences of the profile do
// not count against it; errors do.
func verdict(rules []spec.Rule, cells map[string][]Cell, bi int, startFailed bool) (string, []string) {
	if startFailed {
		return "not run", nil
	}
	coreOK, allOK := true, true
	features := map[string]bool{}
	for _, r := range rules {
		if r.Level != spec.Must {
			continue
		}
		switch cells[r.ID][bi].Outcome {
		case Fail, Error, ExpectedFail:
		default:
			continue
		}
		allOK = false
		if r.FeatureOrCore() == spec.Core {
			coreOK = false
		} else {
			features[string(r.Feature)] = true
		}
	}
	var fs []string
	for f := range features {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	switch {
	case allOK:
		return "conforms", nil
	case coreOK:
		return "conforms to core", fs
	}
	return "does not conform", fs
}

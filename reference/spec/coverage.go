package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Section is one section of the Azure Table design guide, by its English anchor.
type Section struct {
	Anchor string
	Title  string
}

// DesignGuideSections lists the sections of the design guide that conform covers, in the
// guide's order (SrcDesignGuide; the anchors are the English ones of the 2020 revision).
var DesignGuideSections = []Section{
	{"about-azure-table-storage", "About Azure Table storage (overview, data model)"},
	{"table-partitions", "Table partitions"},
	{"entity-group-transactions", "Entity group transactions"},
	{"capacity-considerations", "Capacity considerations"},
	{"cost-considerations", "Cost considerations"},
	{"guidelines-for-table-design", "Guidelines for table design"},
	{"design-for-querying", "Design for querying"},
	{"how-your-choice-of-partitionkey-and-rowkey-affects-query-performance", "How PartitionKey and RowKey affect query performance"},
	{"choose-an-appropriate-partitionkey", "Choose an appropriate PartitionKey"},
	{"optimize-queries-for-table-storage", "Optimize queries"},
	{"sort-data-in-table-storage", "Sort data"},
	{"design-for-data-modification", "Design for data modification"},
	{"optimize-the-performance-of-insert-update-and-delete-operations", "Optimize insert, update and delete"},
	{"ensure-consistency-in-your-stored-entities", "Ensure consistency in your stored entities"},
	{"ensure-your-design-for-efficient-modifications-facilitates-efficient-queries", "Efficient modifications facilitate efficient queries"},
	{"encrypt-table-data", "Encrypt table data"},
	{"model-relationships", "Model relationships"},
	{"one-to-many-relationships", "One-to-many relationships"},
	{"one-to-one-relationships", "One-to-one relationships"},
	{"join-in-the-client", "Join in the client"},
	{"inheritance-relationships", "Inheritance relationships"},
	{"table-design-patterns", "Table design patterns"},
	{"intra-partition-secondary-index-pattern", "Intra-partition secondary index pattern"},
	{"inter-partition-secondary-index-pattern", "Inter-partition secondary index pattern"},
	{"eventually-consistent-transactions-pattern", "Eventually consistent transactions pattern"},
	{"index-entities-pattern", "Index entities pattern"},
	{"denormalization-pattern", "Denormalization pattern"},
	{"compound-key-pattern", "Compound key pattern"},
	{"log-tail-pattern", "Log tail pattern"},
	{"high-volume-delete-pattern", "High volume delete pattern"},
	{"data-series-pattern", "Data series pattern"},
	{"wide-entities-pattern", "Wide entities pattern"},
	{"large-entities-pattern", "Large entities pattern"},
	{"prependappend-anti-pattern", "Prepend/append anti-pattern"},
	{"log-data-anti-pattern", "Log data anti-pattern"},
	{"implementation-considerations", "Implementation considerations"},
	{"retrieve-entities", "Retrieve entities"},
	{"retrieve-large-numbers-of-entities-from-a-query", "Retrieve large numbers of entities (segmented results)"},
	{"server-side-projection", "Server-side projection"},
	{"modify-entities", "Modify entities"},
	{"managing-concurrency", "Managing concurrency"},
	{"merge-or-replace", "Merge or replace"},
	{"work-with-heterogeneous-entity-types", "Work with heterogeneous entity types"},
	{"control-access-with-shared-access-signatures", "Control access with shared access signatures"},
	{"asynchronous-and-parallel-operations", "Asynchronous and parallel operations"},
}

// KnownSection reports whether anchor is a section of DesignGuideSections.
func KnownSection(anchor string) bool {
	for _, s := range DesignGuideSections {
		if s.Anchor == anchor {
			return true
		}
	}
	return false
}

// Coverage maps each design-guide section to the ids of the rules that cover it.
func Coverage() map[string][]string {
	m := map[string][]string{}
	for _, r := range Rules() {
		for _, s := range r.Sections {
			m[s] = append(m[s], r.ID)
		}
	}
	for _, ids := range m {
		sort.Strings(ids)
	}
	return m
}

// UncoveredSections lists the sections no rule covers.
func UncoveredSections() []string {
	cov := Coverage()
	var out []string
	for _, s := range DesignGuideSections {
		if len(cov[s.Anchor]) == 0 {
			out = append(out, s.Anchor)
		}
	}
	return out
}

// CoverageMarkdown renders the coverage map: each section of the design guide against the
// rules that cover it. docs/COVERAGE.md is this text, checked by a test.
func CoverageMarkdown() string {
	var b strings.Builder
	cov := Coverage()
	rules := Rules()
	levels := map[Level]int{}
	for _, r := range rules {
		levels[r.Level]++
	}
	fmt.Fprintf(&b, "# Coverage of the Azure Table design guide\n\n")
	fmt.Fprintf(&b, "Generated from the rule catalogue (reference/spec) by `go test ./reference/spec -update-coverage`; a test keeps it current.\n\n")
	fmt.Fprintf(&b, "%d rules: %d MUST, %d SHOULD, %d MAY. Sections without rules: %d.\n\n", len(rules), levels[Must], levels[Should], levels[May], len(UncoveredSections()))
	fmt.Fprintf(&b, "| section | rules |\n|---|---|\n")
	for _, s := range DesignGuideSections {
		ids := cov[s.Anchor]
		cell := "**none**"
		if len(ids) > 0 {
			quoted := make([]string, len(ids))
			for i, id := range ids {
				quoted[i] = "`" + id + "`"
			}
			cell = fmt.Sprintf("%d: %s", len(ids), strings.Join(quoted, ", "))
		}
		fmt.Fprintf(&b, "| [%s](%s#%s) | %s |\n", s.Title, SrcDesignGuide, s.Anchor, cell)
	}
	areas := map[Area]int{}
	for _, r := range rules {
		areas[r.Area]++
	}
	var names []string
	for a := range areas {
		names = append(names, string(a))
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "\n## Rules by area\n\n| area | rules |\n|---|---:|\n")
	for _, a := range names {
		fmt.Fprintf(&b, "| %s | %d |\n", a, areas[Area(a)])
	}
	return b.String()
}

package spec

// orderingSecSort is the design guide's "Sort data in Table storage" section.
const orderingSecSort = "sort-data-in-table-storage"

// Rules of the order of query results (EVIDENCE.md 3.2, 11.9). Results are "sorted by
// PartitionKey, then by RowKey" (QTE) and keys are "canonically sorted" as strings, so
// numbers in keys must be zero-padded (IE, design guide). For ASCII keys the order is
// ordinal and case-sensitive: live Storage answers `'b' gt 'B'` and `'b' lt 'bB'` (the
// CloudStub evidence cited in rules_query.go) and lists partition-10 before partition-2.
// How characters outside ASCII compare is not documented (UNCERTAIN); conform expects
// ordinal by UTF-16 code unit (api.CompareKeyStrings) and checks it at SHOULD.
func init() {
	sort := []string{orderingSecSort}
	AddRules(
		Rule{ID: "ordering.key-order", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2")},
			Text:     "Query results MUST come sorted by PartitionKey, then by RowKey, ascending, whatever order the entities were written in.",
			Source:   SrcDesignGuide + "#" + orderingSecSort,
			Sections: []string{orderingSecSort, "design-for-querying"}},
		Rule{ID: "ordering.ascii", Level: Should, Area: AreaOrdering, Evidence: []Fact{doc("3.2", "results sorted by PartitionKey, then RowKey, as strings"), open("E-compare-open", "the string order")},
			Text:     "Keys of ASCII characters SHOULD sort ordinally by character code: case-sensitively (B before a), punctuation and digits by their codes, a prefix before its extensions.",
			Source:   SrcQueryingTables,
			Sections: sort},
		Rule{ID: "ordering.zero-padding", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2")},
			Text:     "Keys MUST sort as strings: fixed-width zero-padded numbers sort numerically, unpadded numbers do not.",
			Source:   SrcDesignGuide + "#" + orderingSecSort,
			Sections: sort},
		Rule{ID: "ordering.non-ascii", Level: Should, Area: AreaOrdering,
			Text:     "Keys with characters outside ASCII SHOULD sort ordinally by UTF-16 code unit, without normalization or culture-aware rules.",
			Source:   SrcQueryingTables,
			Sections: sort},
		Rule{ID: "ordering.surrogates", Level: Should, Area: AreaOrdering,
			Text:     "Keys with characters above U+FFFF SHOULD sort by their UTF-16 surrogate pairs, before characters U+E000..U+FFFF.",
			Source:   SrcQueryingTables,
			Sections: sort},
		Rule{ID: "ordering.empty-partition-key", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2"), traffic("E-keys-recorded")},
			Text:     "An entity with an empty PartitionKey MUST sort before every other partition.",
			Source:   SrcDataModel,
			Sections: sort},
		Rule{ID: "ordering.empty-row-key", Level: Should, Area: AreaOrdering,
			Text:     "An empty RowKey SHOULD be accepted and sort first in its partition.",
			Source:   SrcDataModel,
			Sections: sort},
		Rule{ID: "ordering.across-pages", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2"), doc("3.5")},
			Text:     "Key order MUST hold across pages: each page continues the order where the previous one ended.",
			Source:   SrcPagination,
			Sections: []string{orderingSecSort, "retrieve-large-numbers-of-entities-from-a-query"}},
		Rule{ID: "ordering.across-partitions", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2")},
			Text:     "Results MUST be grouped by partition, partitions in key order, with the RowKey order starting again in each partition.",
			Source:   SrcQueryingTables,
			Sections: sort},
		Rule{ID: "ordering.filtered", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2")},
			Text:     "The matches of a filtered query (range, partition scan or table scan) MUST come back in key order.",
			Source:   SrcDesignGuide + "#how-your-choice-of-partitionkey-and-rowkey-affects-query-performance",
			Sections: []string{orderingSecSort, "design-for-querying", "how-your-choice-of-partitionkey-and-rowkey-affects-query-performance"}},
		Rule{ID: "ordering.inverted-ticks", Level: Must, Area: AreaOrdering, Evidence: []Fact{doc("3.2")},
			Text:     "RowKeys built from zero-padded inverted ticks MUST return the newest entity first, so the n most recent entities are the first n results.",
			Source:   SrcDesignGuide + "#" + orderingSecSort,
			Sections: []string{orderingSecSort, "log-tail-pattern"}},
	)
}

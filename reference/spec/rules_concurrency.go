package spec

// Rules of optimistic concurrency with ETags (EVIDENCE.md 2.3, 2.4; the design guide's
// "Managing concurrency").

const secManagingConcurrency = "managing-concurrency"

func init() {
	AddRules(
		Rule{ID: "concurrency.stale-etag.replace", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3"), traffic("E-entity-ops-recorded")},
			Text:     "Update Entity whose If-Match ETag is no longer current MUST fail with 412 UpdateConditionNotSatisfied and change nothing.",
			Source:   SrcUpdateEntity + "#request-headers",
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.stale-etag.merge", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3"), traffic("E-entity-ops-recorded")},
			Text:     "Merge Entity whose If-Match ETag is no longer current MUST fail with 412 UpdateConditionNotSatisfied and change nothing.",
			Source:   SrcMergeEntity + "#request-headers",
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.stale-etag.delete", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3"), traffic("E-entity-ops-recorded")},
			Text:     "Delete Entity whose If-Match ETag is no longer current MUST fail with 412 UpdateConditionNotSatisfied and delete nothing.",
			Source:   SrcDeleteEntity + "#request-headers",
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.current-etag", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A replace, merge or delete whose If-Match is the entity's current ETag, as any operation returned it, MUST succeed.",
			Source:   SrcDesignGuide + "#" + secManagingConcurrency,
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.if-match-any", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3")},
			Text:     "If-Match * MUST match an existing entity whatever its ETag, for replace, merge and delete.",
			Source:   SrcUpdateEntity + "#request-headers",
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.single-winner", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Of concurrent conditional writes of one entity that carry the same current ETag, exactly one MUST succeed; the others MUST fail with 412 (or 404, for a delete that finds the entity already gone).",
			Source:   SrcDesignGuide + "#" + secManagingConcurrency,
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.no-if-match.upsert", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3")},
			Text:     "Update Entity and Merge Entity without If-Match MUST be unconditional (Insert Or Replace, Insert Or Merge): they succeed whatever the entity's ETag.",
			Source:   SrcInsertOrRepl,
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "concurrency.etag.recreated", Level: Must, Area: AreaConcurrency, Evidence: []Fact{doc("2.3"), traffic("2.4")},
			Text:     "The ETag of an entity that was since deleted and inserted again MUST no longer match: a conditional write with it fails with 412.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{secManagingConcurrency}},
	)
}

package spec

// paginationSecLarge is the design guide's section on retrieving large numbers of entities
// with segmented results (continuation tokens).
const paginationSecLarge = "retrieve-large-numbers-of-entities-from-a-query"

// Rules of paging through Query Entities results with continuations (QTP; EVIDENCE.md 3.3,
// 3.5). A page holds at most 1000 entities; the service returns a continuation when more
// results remain, when the 5-second limit is hit or when a partition (server) boundary is
// crossed, and a page may hold fewer entities than $top, even none, with a continuation.
// Clients re-send $filter, $select and $top with the continuation. Storage's tokens name the
// next row to return (CONFIRMED-TRAFFIC), a position in the key order: a saved token
// resumes exactly there, also after writes. Paging of Query Tables is in rules_tables.go.
func init() {
	large := []string{paginationSecLarge}
	AddRules(
		Rule{ID: "pagination.page-cap", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "A page of Query Entities MUST hold at most 1000 entities.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.page-full", Level: Should, Area: AreaPagination,
			Text:     "A single-partition query with more than 1000 matches and no $top SHOULD return 1000 entities in its first page.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.continuation", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "A page MUST carry a continuation whenever matching entities remain after it.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.short-pages", Level: May, Area: AreaPagination,
			Text:     "A page MAY hold fewer entities than $top, or none, and still carry a continuation.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.exactly-once", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "Following continuations to the end MUST return every matching entity exactly once, across pages and partition boundaries.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.partition-boundary", Level: May, Area: AreaPagination,
			Text:     "A page MAY end at a partition boundary before $top is reached, with a continuation.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.resume", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "A saved continuation MUST resume the query at the same position when it is used later, any number of times.",
			Source:   SrcDesignGuide + "#" + paginationSecLarge,
			Sections: large},
		Rule{ID: "pagination.resume-after-insert", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5"), traffic("E-continuation-recorded", "the row token names the next row: a position")},
			Text:     "After inserts, a saved continuation MUST neither repeat entities already returned nor skip remaining ones; entities inserted before its position MUST NOT appear.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.resume-after-delete", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5"), traffic("E-continuation-recorded", "the row token names the next row: a position")},
			Text:     "After deletes, a saved continuation MUST return each remaining entity exactly once and no deleted one, also when the entity at its position was deleted.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.resume-reads-current", Level: Should, Area: AreaPagination,
			Text:     "Entities written ahead of a saved continuation's position SHOULD come back as they are when it is used: inserted ones included, updated ones with their new values.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.options-resent", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "$filter, $select and $top re-sent with a continuation MUST apply to every page.",
			Source:   SrcPagination,
			Sections: []string{paginationSecLarge, "server-side-projection"}},
		Rule{ID: "pagination.last-page", Level: Must, Area: AreaPagination, Evidence: []Fact{doc("3.5")},
			Text:     "Following continuations MUST end with a page that carries none; a query over an empty table MUST return one empty page without a continuation.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.no-extra-page", Level: Should, Area: AreaPagination,
			Text:     "A single-partition page that returns the last matches with room to spare SHOULD carry no continuation.",
			Source:   SrcPagination,
			Sections: large},
		Rule{ID: "pagination.top-boundary", Level: May, Area: AreaPagination,
			Text:     "When the matches end exactly at a $top boundary, that page MAY carry a continuation that leads to an empty last page.",
			Source:   SrcPagination,
			Sections: large},
	)
}

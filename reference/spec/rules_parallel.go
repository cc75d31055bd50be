package spec

// Rules of parallel use (the design guide's "Asynchronous and parallel operations"): what
// many clients working at once may rely on.

const secAsync = "asynchronous-and-parallel-operations"

func init() {
	AddRules(
		Rule{ID: "parallel.query.equivalent", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Queries over different partitions run in parallel MUST together return exactly what one serial query of the table returns.",
			Source:   SrcDesignGuide + "#" + secAsync,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.query.paged", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Paged queries run in parallel MUST each return their whole result, page by page, as if run alone.",
			Source:   SrcDesignGuide + "#" + secAsync,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.insert.durable", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Every insert acknowledged to concurrent writers MUST be stored with the properties sent.",
			Source:   SrcDesignGuide + "#" + secAsync,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.upsert.durable", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("E-design-guide")},
			Text:     "After concurrent upserts, every entity MUST hold the value its last acknowledged write sent.",
			Source:   SrcDesignGuide + "#" + secAsync,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.insert.once", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("2.3"), traffic("E-entity-ops-recorded")},
			Text:     "Of concurrent inserts of one entity exactly one MUST succeed; the others fail with 409 EntityAlreadyExists.",
			Source:   SrcInsertEntity,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.delete.once", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("2.3"), traffic("E-entity-ops-recorded")},
			Text:     "Of concurrent deletes of one entity with If-Match * exactly one MUST succeed; the others fail with 404.",
			Source:   SrcDeleteEntity,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.merge.counter", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Concurrent read-modify-write merges conditioned on the ETag, retried on 412, MUST converge: a counter ends at the number of acknowledged increments.",
			Source:   SrcDesignGuide + "#" + secManagingConcurrency,
			Sections: []string{secAsync, secManagingConcurrency}},
		Rule{ID: "parallel.merge.disjoint", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("2.3")},
			Text:     "Concurrent merges of different properties of one entity MUST all be kept.",
			Source:   SrcMergeEntity,
			Sections: []string{secAsync}},
		Rule{ID: "parallel.etag.distinct", Level: Must, Area: AreaParallel, Evidence: []Fact{doc("2.3"), traffic("2.4")},
			Text:     "Concurrent acknowledged writes of one entity MUST each return a different ETag.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{secAsync, secManagingConcurrency}},
	)
}

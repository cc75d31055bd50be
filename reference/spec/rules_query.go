package spec

// Design-guide anchors of the querying sections (English originals of the guide; the
// coverage map reads them from Rule.Sections).
const (
	querySecDesign     = "design-for-querying"
	querySecKeyChoice  = "how-your-choice-of-partitionkey-and-rowkey-affects-query-performance"
	querySecChoosePK   = "choose-an-appropriate-partitionkey"
	querySecOptimize   = "optimize-queries-for-table-storage"
	querySecProjection = "server-side-projection"
	querySecRetrieve   = "retrieve-entities"
)

// Rules of Query Entities: which entities a $filter selects, the literal forms, $select and
// $top (EVIDENCE.md 3.1-3.4).
//
// Evidence for the typed comparison rules (EVIDENCE.md 3.2 calls them UNCERTAIN in the
// documentation): the public test suite Andrei15193/CloudStub runs the same queries against
// a live Storage account (TableQueryComparisonTestData.cs, TableClientQueryTests.cs). It
// shows, for every pair of the eight EDM types and every operator: a property compared with
// a literal of another type answers as if the property sorted below the literal (eq, gt, ge
// false; ne, lt, le true), except that an Int64 property compares numerically with an Int32
// literal and a Double property with Int32 and Int64 literals; a comparison on a property
// the entity lacks is false for all six operators; `not` over such a comparison is true; a
// bare property is true only for a Boolean true; `and` binds more tightly than `or`; $top
// of -1 and of 1001 fail with 400 InvalidInput; a syntax error is 400 InvalidInput.
func init() {
	scans := []string{querySecDesign, querySecKeyChoice, querySecRetrieve}
	AddRules(
		// Design for querying: the four kinds of query.
		Rule{ID: "query.point", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A point query (PartitionKey eq and RowKey eq) MUST return exactly the one entity with those keys.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: scans},
		Rule{ID: "query.point.absent", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A point query for keys that do not exist MUST succeed with no entities and no continuation.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: scans},
		Rule{ID: "query.range", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A range query (PartitionKey eq with a RowKey range) MUST return exactly the entities of that partition whose RowKey lies in the range, each bound included or excluded as its operator says.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: scans},
		Rule{ID: "query.partition-scan", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A partition scan (PartitionKey eq with a condition on another property) MUST return exactly the entities of that partition that satisfy the condition.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: scans},
		Rule{ID: "query.partition-scan.exact", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "PartitionKey eq MUST select exactly one partition: keys that differ by case, by a prefix, a suffix or a trailing space are other partitions.",
			Source:   SrcDesignGuide + "#" + querySecChoosePK,
			Sections: []string{querySecChoosePK, querySecDesign}},
		Rule{ID: "query.table-scan", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A filter without a PartitionKey condition (a table scan) MUST return the matching entities of every partition.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: []string{querySecDesign, querySecKeyChoice, querySecOptimize}},
		Rule{ID: "query.or-keys", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A filter that joins key equalities with or MUST return exactly the entities with one of the named keys.",
			Source:   SrcDesignGuide + "#" + querySecKeyChoice,
			Sections: scans},
		Rule{ID: "query.prefix", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:     "A prefix search written as ge 'P' and lt 'Q' MUST return exactly the keys that start with P (the service has no wildcards).",
			Source:   SrcQueryingTables,
			Sections: []string{querySecDesign, querySecOptimize}},

		// Comparison operators with a literal of each EDM type (QTE).
		Rule{ID: "query.compare.int32", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "Each comparison operator (eq ne gt ge lt le) MUST compare an Edm.Int32 property with an Int32 literal numerically.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.int64", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1", "comparisons with typed literals; the Int64 literal 123L of the OData conventions")},
			Text:   "Each comparison operator MUST compare an Edm.Int64 property with an Int64 literal (123L) numerically over the whole 64-bit range.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.double", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "Each comparison operator MUST compare an Edm.Double property with a Double literal numerically.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.boolean", Level: Should, Area: AreaQuery, Evidence: []Fact{doc("3.1", "comparisons with typed literals"), open("E-compare-open", "the order of Boolean values")},
			Text:   "Each comparison operator SHOULD compare an Edm.Boolean property with true or false, false sorting below true.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.datetime", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "Each comparison operator MUST compare an Edm.DateTime property with a datetime'...' literal as instants, to the 100 ns tick.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.guid", Level: Should, Area: AreaQuery, Evidence: []Fact{doc("3.1", "comparisons with typed literals"), open("E-compare-open", "the order of Guid values")},
			Text:   "Each comparison operator SHOULD compare an Edm.Guid property with a guid'...' literal.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.binary", Level: Should, Area: AreaQuery, Evidence: []Fact{doc("3.1", "comparisons with typed literals"), open("E-compare-open", "the order of Binary values")},
			Text:   "Each comparison operator SHOULD compare an Edm.Binary property with an X'...' literal bytewise, a shorter prefix sorting first.",
			Source: SrcQueryingTables},
		Rule{ID: "query.compare.string", Level: Should, Area: AreaQuery, Evidence: []Fact{doc("3.1", "comparisons with typed literals"), open("E-compare-open", "the string order")},
			Text:   "Each comparison operator SHOULD compare an Edm.String property with a String literal ordinally and case-sensitively.",
			Source: SrcQueryingTables},
		Rule{ID: "query.literal.quote", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "A single quote inside a String literal MUST be written doubled ('') and MUST match a stored single quote.",
			Source: SrcQueryingTables},
		Rule{ID: "query.literal.forms", Level: Should, Area: AreaQuery,
			Text:   "Negative numbers, fractional seconds in datetime literals and the lower-case x'..' binary prefix SHOULD be accepted with their usual meaning.",
			Source: SrcQueryingTables},
		Rule{ID: "query.literal.binary-keyword", Level: May, Area: AreaQuery,
			Text:   "The binary'..' literal form MAY be accepted; when it is, it MUST mean the same bytes as X'..'.",
			Source: SrcQueryingTables},

		// Typed semantics across types and for missing properties (EVIDENCE.md 3.2; see above).
		Rule{ID: "query.compare.widening", Level: Should, Area: AreaQuery, Evidence: []Fact{doc("3.1", "a constant must have the property's type for valid results"), open("E-compare-open", "comparing values of different types")},
			Text:   "An Edm.Int64 property SHOULD compare numerically with an Int32 literal, and an Edm.Double property with Int32 and Int64 literals.",
			Source: SrcQueryingTables},
		// The documentation says only that constants must have the property's type for valid
		// results (EVIDENCE.md 3.2, 11.8): what Storage answers otherwise is open, so
		// query.compare.mismatch is a MAY that records the answer (a MUST until issue 20).
		// query.compare.missing asserts what reported live answers show, eq, and ne with a
		// String literal, leaving the entity out (E-filter-missing-property, traffic; a MAY
		// from issue 20 to issue 30), and records the other operators and literal types
		// (docs/EVIDENCE.md, "Rule levels and their evidence").
		Rule{ID: "query.compare.mismatch", Level: May, Area: AreaQuery,
			Text:   "A property compared with a literal of another EDM type (outside numeric widening) MAY select the entity or not, and the query MAY be refused with 400; the answer is recorded (the reference answers as if the property sorted below the literal: eq, gt and ge false; ne, lt and le true).",
			Source: SrcQueryingTables,
			Evidence: []Fact{{Cite: "E-compare-open", Strength: Open, Note: "comparing values of different types is not documented"},
				{Cite: "EVIDENCE.md 11.8", Strength: Open}}},
		Rule{ID: "query.compare.missing", Level: Must, Area: AreaQuery,
			Text:   "A comparison with eq, or with ne and a String literal, on a property the entity does not have MUST leave the entity out (E-filter-missing-property); with the other operators and literal types the entity MAY be left out or selected, or the query refused with 400, and the answer is recorded (the reference leaves it out for every operator).",
			Source: SrcQueryingTables,
			Evidence: []Fact{{Cite: "E-filter-missing-property", Strength: Traffic, Note: "eq, and ne with a String literal, on a property the entity lacks leave the entity out"},
				{Cite: "E-compare-open", Strength: Open, Recorded: true, Note: "the other operators and literal types on a property the entity lacks are not documented"},
				{Cite: "EVIDENCE.md 11.8", Strength: Open, Recorded: true}}},

		// Boolean structure.
		Rule{ID: "query.logic.precedence", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "Without parentheses, and MUST bind more tightly than or.",
			Source: SrcQueryingTables},
		Rule{ID: "query.logic.parentheses", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "Parentheses MUST group conditions, overriding the default precedence.",
			Source: SrcQueryingTables},
		// What a comparison on a property the entity lacks gives under not (false, so not
		// selects the entity, or unknown, so it does not) is open (E-filter-missing-property):
		// the spec asserts not over entities that hold the compared properties and records
		// the others (until the evidence was re-read it asserted that not selects them).
		Rule{ID: "query.logic.not", Level: Must, Area: AreaQuery,
			Text:   "not MUST negate its operand over the entities that hold the compared properties with the literal's type; whether it selects an entity that lacks one is recorded (E-filter-missing-property).",
			Source: SrcQueryingTables,
			Evidence: []Fact{{Cite: "EVIDENCE.md 3.1", Strength: Doc, Note: "not is one of the operators of a filter"},
				{Cite: "E-compare-open", Strength: Open, Recorded: true, Note: "not over a comparison on a property the entity lacks"}}},
		Rule{ID: "query.logic.bare-boolean", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "A bare property name used as a condition MUST hold exactly for the entities whose property is the Boolean true.",
			Source: SrcQueryingTables},
		Rule{ID: "query.logic.constant-left", Level: May, Area: AreaQuery,
			Text:   "A comparison written with the constant first MAY be refused; when it is accepted it MUST mean the mirrored comparison.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.property-vs-property", Level: Should, Area: AreaQuery,
			Text:   "A comparison between two properties SHOULD be refused, since one side of each comparison must be a constant.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.bare-constant", Level: May, Area: AreaQuery,
			Evidence: []Fact{sdk("E-filter-bare-boolean", "the whole filter"), open("E-filter-bare-boolean-open", "a constant inside a larger filter")},
			Text:     "A $filter that is only true or false (as health checks of live accounts send), or that holds true or false as one of its conditions (`Name eq 'test' and true`, as the .NET SDK's LINQ translation of a PredicateBuilder sends), MAY be run or refused; the choice is recorded, a refusal MUST be a 4xx or 501, and a run query MUST take each constant for its truth value. The reference runs both (E-filter-bare-boolean, E-filter-bare-boolean-open).",
			Source:   SrcHealthCheckFilter},
		Rule{ID: "query.filter.null", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "A filter that contains a null literal MUST be refused.",
			Source: SrcQueryEntities},
		Rule{ID: "query.filter.comparison-limit", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1")},
			Text:   "A filter with 15 discrete comparisons MUST be accepted and evaluated.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.comparison-limit.over", Level: May, Area: AreaQuery,
			Text:   "A filter with more than 15 discrete comparisons MAY be refused with 400; when it is accepted its results MUST be right.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.syntax", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1"), traffic("E-filter-recorded")},
			Text:   "A malformed filter MUST fail with 400 InvalidInput.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.syntax.message", Level: May, Area: AreaQuery,
			Text:   "The message of a filter syntax error MAY name the position, as Storage's \"Syntax error at position N in '...'\" does.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.bad-literal", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1"), traffic("E-filter-recorded")},
			Text:   "A typed literal whose text is not a valid value of its type MUST fail with 400.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.case.operators", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1"), traffic("E-filter-recorded")},
			Text:   "Operators MUST be written in lower case: EQ, And, NOT and similar spellings MUST fail with 400 InvalidInput.",
			Source: SrcQueryingTables},
		Rule{ID: "query.filter.case.properties", Level: Must, Area: AreaQuery,
			Text:   "Property names in a filter MUST match case-sensitively: a differently cased name is a property the entity does not have, which eq, and ne with a String literal, leave out (query.compare.missing's subject, a precondition here).",
			Source: SrcQueryingTables,
			Evidence: []Fact{{Cite: "EVIDENCE.md 3.1", Strength: Doc, Note: "everything in a filter is case-sensitive"},
				{Cite: "E-filter-missing-property", Strength: Traffic, Note: "eq, and ne with a String literal, on a property the entity lacks leave the entity out"}}},
		Rule{ID: "query.filter.timestamp", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.1"), doc("1.2")},
			Text:   "Timestamp MUST be filterable as an Edm.DateTime property of every entity, with the values queries return.",
			Source: SrcQueryingTables},

		// $select (QE; EVIDENCE.md 3.4) and the design guide's server-side projection.
		Rule{ID: "query.select.only", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.4")},
			Text:     "$select MUST return only the selected custom properties.",
			Source:   SrcDesignGuide + "#" + querySecProjection,
			Sections: []string{querySecProjection}},
		Rule{ID: "query.select.system", Level: Must, Area: AreaQuery, Evidence: []Fact{traffic("E-select-recorded")},
			Text:     "$select MUST NOT add PartitionKey, RowKey or Timestamp unless they are selected.",
			Source:   SrcQueryEntities,
			Sections: []string{querySecProjection}},
		Rule{ID: "query.select.system-selected", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.4")},
			Text:     "PartitionKey, RowKey and Timestamp named in $select MUST come back.",
			Source:   SrcQueryEntities,
			Sections: []string{querySecProjection}},
		Rule{ID: "query.select.missing", Level: May, Area: AreaQuery,
			Text:     "A selected property that the entity lacks MAY come back as null or be left out.",
			Source:   SrcQueryEntities,
			Sections: []string{querySecProjection}},
		Rule{ID: "query.select.types", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.4")},
			Text:     "$select MUST keep the EDM type and value of every selected property.",
			Source:   SrcQueryEntities,
			Sections: []string{querySecProjection}},
		Rule{ID: "query.select.filter-independent", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.4")},
			Text:     "$filter MUST be evaluated on the whole entity, including properties that $select leaves out.",
			Source:   SrcQueryEntities,
			Sections: []string{querySecProjection}},

		// $top (QE, QTP; EVIDENCE.md 3.3).
		Rule{ID: "query.top.limit", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.3")},
			Text:   "A page MUST hold at most $top entities and MUST carry a continuation when matching entities remain.",
			Source: SrcQueryEntities},
		Rule{ID: "query.top.fill", Level: Should, Area: AreaQuery,
			Text:   "A single-partition query with more than $top matches SHOULD return exactly $top entities in its first page.",
			Source: SrcPagination},
		Rule{ID: "query.top.max", Level: Must, Area: AreaQuery, Evidence: []Fact{doc("3.3")},
			Text:   "$top=1000 MUST be accepted.",
			Source: SrcQueryEntities},
		Rule{ID: "query.top.over-max", Level: Must, Area: AreaQuery,
			Text:   "$top above 1000 MUST be refused with 400; the error code, which the evidence leaves open, is recorded.",
			Source: SrcQueryEntities,
			Evidence: []Fact{{Cite: "E-top-over-max", Strength: Traffic, Note: "a live answer refused $top above 1000 with 400 (azure-sdk-for-net#26035)"},
				{Cite: "EVIDENCE.md 11.8", Strength: Open, Note: "the code", Recorded: true}}},
		// EVIDENCE.md 13, E-top-zero.
		Rule{ID: "query.top.zero", Level: Must, Area: AreaQuery, Evidence: []Fact{traffic("E-top-zero")},
			Text:   "$top=0 MUST be answered with a page without entities.",
			Source: SrcTopZero},
		Rule{ID: "query.top.negative", Level: Should, Area: AreaQuery, Evidence: []Fact{open("E-top-open", "a negative $top: neither documented nor recorded")},
			Text:   "A negative $top SHOULD fail with 400 InvalidInput.",
			Source: SrcQueryEntities},
	)
}

package mutant

// The rules the query mutants break besides their Breaks, found by running each over the
// whole catalogue (suites/all TestMutants).
var _ = declareAlsoFails(map[string]map[string]string{
	"query-etags-dropped": {
		"protocol.accept.fullmetadata":     "the mutant leaves odata.etag out of full-metadata query results too, which must carry it",
		"protocol.format.overrides-accept": "the full-metadata answer $format asks for lacks odata.etag, which the mutant drops from every query result",
	},
	"select-ignored": {
		"pattern.impl.projection": "a query with $select=Email returns every property of the employees",
	},
	"filter-errors-as-empty": {
		"query.filter.comparison-limit.over": "a filter over the comparison limit is answered as accepted, with no results instead of the matching ones",
	},
	"parentheses-ignored": {
		"query.filter.syntax": "a filter with an unclosed, unopened or empty pair of parentheses is malformed, which the mutant evaluates instead of refusing",
	},
})

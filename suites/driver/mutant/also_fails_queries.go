package mutant

// scanEndsAfterFirstPage is why scan-first-partition-only breaks the rules about following
// continuations: their queries have no PartitionKey condition.
const scanEndsAfterFirstPage = "a query without a PartitionKey condition ends after its first page: the mutant drops its continuation and answers a later page empty"

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
	"range-bounds-inclusive": {
		"query.compare.binary":       "gt and lt select the value equal to the Binary literal",
		"query.compare.boolean":      "gt and lt select the value equal to the Boolean literal",
		"query.compare.datetime":     "gt and lt select the value equal to the DateTime literal",
		"query.compare.double":       "gt and lt select the value equal to the Double literal",
		"query.compare.guid":         "gt and lt select the value equal to the Guid literal",
		"query.compare.int64":        "gt and lt select the value equal to the Int64 literal",
		"query.compare.widening":     "gt and lt select the value equal to the narrower literal",
		"query.filter.timestamp":     "Timestamp lt or gt one of its values selects that value too, which an Edm.DateTime comparison excludes",
		"pattern.compound-key.range": "RowKey lt 'empid_000124' returns the entity of employee 000124 itself",
		"pattern.log-tail.since":     "RowKey lt the inverted ticks of T returns the entity logged at T, which the rule excludes",
	},
	"key-eq-as-prefix": {
		"query.point":                   "a point query also returns the entities whose keys begin with the named ones",
		"query.point.absent":            "a point query for absent keys returns the entities whose keys begin with them",
		"query.range":                   "PartitionKey eq of a range query also selects the partitions whose names begin with it",
		"query.partition-scan":          "PartitionKey eq of a partition scan also selects the partitions whose names begin with it",
		"query.or-keys":                 "each key equality of the or also selects the keys that begin with it",
		"query.filter.comparison-limit": "the mutant turns each key equality into two comparisons, so a filter of 15 equalities goes over the limit and is refused",
	},
	"literals-as-strings": {
		"query.literal.forms":          "a negative number, a datetime, a binary or Guid literal compared as text does not select the value it denotes",
		"query.literal.binary-keyword": "binary'0AFF' compared as the text 0AFF does not select what X'0AFF' selects",
		"query.filter.timestamp":       "a datetime literal compared as text does not compare Timestamp as an Edm.DateTime",
	},
	"deleted-entities-in-queries": {
		"pagination.resume-after-delete": "a continuation resumed after deletes returns the deleted entities, which the rule excludes",
		"auth.sas.permission.read":       "the mutant marks an entity deleted without sending the delete, so a SAS without d deletes it",
		"auth.sas.permission.delete":     "the mutant reads the entity before marking it deleted, so a SAS with d alone cannot delete it",
		"auth.account-sas.permissions":   "the mutant deletes through Get Entity and its own mark, so sp=d alone cannot delete and sp without d can",
	},
	"reads-from-last-written-table": {
		"entities.key.identity":                  "reading the first of two tables with the same keys returns the entity written to the second",
		"tables.isolation":                       "reading the neighbouring table returns the entities of the table written last",
		"modify.missing.code":                    "Get Entity of a missing entity in a table never written is answered from another table, with 404 TableNotFound",
		"pagination.last-page":                   "a query of an empty table returns the entities of the table written last",
		"pagination.resume":                      "the saved continuation is resumed against the table written last, not the one it came from",
		"pattern.data-series.one-entity":         "the query of the per-hour table is answered from the series table, written last",
		"pattern.eventual.missing-table":         "the worker's read of the current table is answered from the table it tried to write, which does not exist",
		"pattern.high-volume-delete.drop-table":  "a query of the deleted day's table is answered from another day's table",
		"pattern.high-volume-delete.others-kept": "a query of one day's table is answered from the day's table written last",
		"pattern.inter-index.point-query":        "a point query of one of the two tables, data and index copies, is answered from the other, written last",
		"rel.one-to-many.separate-partitions":    "a query of one of the two tables, departments and employees, is answered from the other, written last",
	},
	"scan-first-partition-only": {
		"pattern.log-data.scan":                      "the pattern's scan over the source partitions returns the first partition's messages only",
		"pattern.prepend-append.spread":              "the pattern's RowKey-range scan over all partitions returns the first partition's events only",
		"pattern.high-volume-delete.batched-deletes": "the pattern's scan for the old entities finds those of the first partition only",
		"pagination.continuation":                    scanEndsAfterFirstPage,
		"pagination.exactly-once":                    scanEndsAfterFirstPage,
		"pagination.last-page":                       scanEndsAfterFirstPage,
		"pagination.no-extra-page":                   scanEndsAfterFirstPage,
		"pagination.options-resent":                  scanEndsAfterFirstPage,
		"pagination.page-cap":                        scanEndsAfterFirstPage,
		"pagination.resume":                          scanEndsAfterFirstPage,
		"pagination.resume-after-insert":             scanEndsAfterFirstPage,
		"pagination.resume-reads-current":            scanEndsAfterFirstPage,
		"pagination.short-pages":                     scanEndsAfterFirstPage,
		"pagination.top-boundary":                    scanEndsAfterFirstPage,
		"pattern.impl.segments":                      scanEndsAfterFirstPage,
	},
	"filter-errors-as-empty": {
		"query.filter.comparison-limit.over": "a filter over the comparison limit is answered as accepted, with no results instead of the matching ones",
	},
	"parentheses-ignored": {
		"query.filter.syntax": "a filter with an unclosed, unopened or empty pair of parentheses is malformed, which the mutant evaluates instead of refusing",
	},
})

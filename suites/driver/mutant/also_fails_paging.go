package mutant

// Rules the paging and ordering faults break besides their Breaks, found by running each
// mutant against the whole catalogue.
var _ = declareAlsoFails(map[string]map[string]string{
	"empty-keys-last": {
		"ordering.empty-row-key": "an entity with an empty RowKey comes last in its partition's page, where the rule wants it first",
	},
	"case-insensitive-order": {
		"ordering.non-ascii":         "keys are compared after lowering their case (\u00c4 between \u00e4 and \u00f6), a culture rule where the rule wants UTF-16 code units",
		"ordering.surrogates":        "keys are compared by their UTF-8 bytes, which puts characters above U+FFFF after U+E000..U+FFFF",
		"ordering.across-partitions": "partitions A and a compare equal, so their entities interleave instead of coming grouped by partition",
		"ordering.filtered":          "the matches of partitions B and b interleave, so a table scan's matches are not in key order",
	},
	"rowkey-only-order": {
		"ordering.key-order": "results are sorted by RowKey alone, not by PartitionKey first",
		"ordering.filtered":  "the matches of a table scan are sorted by RowKey alone, not by PartitionKey first",
	},
	"continuation-dropped-at-partition-boundary": {
		"pagination.continuation": "a page whose next match starts a new partition carries no continuation although matches remain",
	},
})

package mutant

// Rules that mutants about error answers, transactions, authorization and service
// settings break besides their Breaks, each with why.
var _ = declareAlsoFails(map[string]map[string]string{
	"tables-auto-created": {
		"batch.table.missing": "a transaction against a missing table creates it and succeeds instead of failing with 404 TableNotFound",
	},
	"doubled-quotes-kept": {
		"entities.key.allowed-characters": "a key holding a quote is not reachable by a key filter, whose literal doubles the quote",
	},
	"batch-failure-index-zero": {
		"pattern.impl.failed-operation-index": "the failure names operation 0, not the index of the operation that failed",
	},
	"signature-not-checked": {
		"auth.bearer.refused":   "any Authorization header is accepted, a bearer token that no trusted issuer signed included",
		"auth.bearer.challenge": "a bearer token that no trusted issuer signed is accepted, so it is never answered with the challenge",
	},
})

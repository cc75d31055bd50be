package mutant

// Rules that mutants about error answers, transactions, authorization and table lifecycle
// break besides their Breaks, each with why.
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
	"error-codes-scrambled": errorCodesScrambled,
	"authorization-as-authentication-failure": {
		"auth.account-sas.permissions":    "a missing permission is refused with AuthenticationFailed, not AuthorizationPermissionMismatch",
		"auth.account-sas.resource-types": "an unsigned resource type is refused with AuthenticationFailed, not AuthorizationResourceTypeMismatch",
		"auth.sas.permission.add":         missingPermissionCode,
		"auth.sas.permission.delete":      missingPermissionCode,
		"auth.sas.permission.read":        missingPermissionCode,
		"auth.sas.permission.update":      missingPermissionCode,
		"auth.sas.permission.upsert":      missingPermissionCode,
		"auth.sas.stored-policy":          "a permission the policy leaves out is refused with AuthenticationFailed, not a code of a missing permission",
		"auth.sas.range.row":              "a key outside the range is refused with AuthenticationFailed, not AuthorizationFailure",
	},
	"sas-rowkey-range-crossed-as-authentication-failure": {
		"auth.sas.range.row": "a RowKey outside the range is refused with AuthenticationFailed, not AuthorizationFailure",
	},
	"sas-ignores-permissions": {
		"auth.sas.stored-policy": "the SAS carries all permissions, so the permissions the policy leaves out are allowed",
	},
	"sas-ignores-validity": {
		"auth.sas.stored-policy": "the SAS carries its own validity, so the validity is not taken from the policy",
	},
	"batch-not-atomic": {
		"pattern.index-entities.same-partition-concurrent": "the operations before a failing one stay applied, so a retried add leaves an employee stored twice or unlisted",
		"batch.duplicate-row":                              refusedButApplied,
		"batch.limit.operations":                           refusedButApplied,
		"batch.partition.single":                           refusedButApplied,
		"batch.retrieve.mixed":                             refusedButApplied,
		"pattern.denormalization.batch-update":             failedButApplied,
		"pattern.index-entities.same-partition-rename":     failedButApplied,
		"pattern.index-entities.same-partition-stale":      failedButApplied,
		"pattern.intra-index.batch-update":                 failedButApplied,
		"pattern.wide-entities.batch":                      failedButApplied,
		"rel.move.batch-refused":                           refusedButApplied,
		"rel.one-to-many.count-in-batch":                   failedButApplied,
		"rel.one-to-many.cross-partition-batch":            refusedButApplied,
	},
	"batch-applied-in-steps": {
		"pattern.index-entities.same-partition-concurrent": "the operations before a failing one stay applied, so a retried add leaves an employee stored twice or unlisted",
		"batch.atomic":                                 failedButApplied,
		"batch.duplicate-row":                          refusedButApplied,
		"batch.limit.payload":                          "a transaction over 4 MiB is applied operation by operation, each under the limit, instead of being refused",
		"batch.partition.single":                       refusedButApplied,
		"batch.retrieve.mixed":                         refusedButApplied,
		"pattern.denormalization.batch-update":         failedButApplied,
		"pattern.index-entities.same-partition-rename": failedButApplied,
		"pattern.index-entities.same-partition-stale":  failedButApplied,
		"pattern.intra-index.batch-update":             failedButApplied,
		"pattern.wide-entities.batch":                  failedButApplied,
		"rel.move.batch-refused":                       refusedButApplied,
		"rel.one-to-many.count-in-batch":               failedButApplied,
		"rel.one-to-many.cross-partition-batch":        refusedButApplied,
	},
	"table-soft-delete": {
		"auth.sas.no-table-management": "Delete Table only hides the table, without the authorization of a delete, so a service SAS deletes its own table",
		"auth.account-sas.permissions": "Delete Table reads the table before hiding it, so an account SAS with the delete permission but not the read one is refused",
	},
	"table-names-case-sensitive": {
		"tables.name.reserved": "the reserved name in its URL case, Tables, counts as another name than tables and is accepted",
	},
	"table-listing-lags": {
		"tables.query.filter": "tables created a moment ago are missing from a filtered Query Tables, which does not return exactly the tables that satisfy it",
		"tables.query.paging": "tables created a moment ago are missing from the pages, which do not return every matching table",
	},
	"cors-preflight-open": {
		"service.cors.preflight-missing-header": "a preflight without Origin or Access-Control-Request-Method is answered 200 instead of 400",
	},
	"cors-preflight-closed": {
		"service.cors.preflight-missing-header": "a preflight without Origin or Access-Control-Request-Method is refused with 403 instead of 400",
	},
	"error-body-dropped": {
		"service.acl.error-xml": "an error of Get or Set Table ACL has no body, so no <m:error> element",
	},
})

// Whys shared by several rules.
const (
	missingPermissionCode = "a missing SAS permission is refused with AuthenticationFailed, not AuthorizationFailure or AuthorizationPermissionMismatch"
	refusedButApplied     = "the operations before the one the refusal names stay applied, so the refused transaction is not without effect"
	failedButApplied      = "the operations before the failing one stay applied, so the failed transaction is not all or nothing"
	otherCode             = "the refusal carries another code of its status than the one the rule names"
)

// errorCodesScrambled lists the rules whose statements name the code of a refusal, which
// error-codes-scrambled replaces by another code of the same status.
var errorCodesScrambled = map[string]string{
	"auth.account-sas.expired":                    otherCode,
	"auth.account-sas.permissions":                otherCode,
	"auth.account-sas.resource-types":             otherCode,
	"auth.account-sas.service":                    otherCode,
	"auth.sas.expired":                            otherCode,
	"auth.sas.ip":                                 otherCode,
	"auth.sas.not-yet-valid":                      otherCode,
	"auth.sas.permission.add":                     "a missing SAS permission is refused with another 403 code than AuthorizationFailure or AuthorizationPermissionMismatch",
	"auth.sas.permission.delete":                  "a missing SAS permission is refused with another 403 code than AuthorizationFailure or AuthorizationPermissionMismatch",
	"auth.sas.permission.read":                    otherCode,
	"auth.sas.permission.update":                  "a missing SAS permission is refused with another 403 code than AuthorizationFailure or AuthorizationPermissionMismatch",
	"auth.sas.permission.upsert":                  "a missing SAS permission is refused with another 403 code than AuthorizationFailure or AuthorizationPermissionMismatch",
	"auth.sas.protocol":                           otherCode,
	"auth.sas.range.partition":                    otherCode,
	"auth.sas.range.row":                          otherCode,
	"auth.sas.stored-policy":                      "a permission the policy leaves out is refused with another 403 code than those of a missing permission",
	"auth.sas.stored-policy-unknown":              otherCode,
	"batch.condition.etag":                        otherCode,
	"batch.duplicate-row":                         otherCode,
	"batch.failure.code":                          "a failed transaction reports another code than its failing operation's",
	"batch.limit.operations":                      otherCode,
	"batch.limit.payload":                         otherCode,
	"batch.partition.code":                        otherCode,
	"batch.table.missing":                         otherCode,
	"concurrency.stale-etag.delete":               otherCode,
	"concurrency.stale-etag.merge":                otherCode,
	"entities.key.forbidden-characters":           otherCode,
	"limits.binary.size":                          otherCode,
	"limits.entity.size":                          otherCode,
	"limits.entity.size-edge":                     otherCode,
	"limits.entity.size-first":                    otherCode,
	"limits.properties.count":                     otherCode,
	"limits.property-name.length":                 otherCode,
	"limits.string.size":                          otherCode,
	"limits.string.size-edge":                     otherCode,
	"modify.missing.code":                         otherCode,
	"parallel.insert.once":                        otherCode,
	"pattern.eventual.delete-gone":                otherCode,
	"pattern.impl.point-query":                    otherCode,
	"pattern.index-entities.same-partition-stale": otherCode,
	"pattern.large-entities.entity-too-large":     otherCode,
	"pattern.large-entities.value-too-large":      otherCode,
	"pattern.wide-entities.batch":                 "the refusal of the part with too many properties carries another code than TooManyProperties",
	"pattern.wide-entities.too-many":              otherCode,
	"query.filter.case.operators":                 otherCode,
	"query.top.negative":                          otherCode,
	"tables.missing.entity-operations":            otherCode,
	"tables.name.case-insensitive":                otherCode,
	"tables.name.charset":                         otherCode,
}

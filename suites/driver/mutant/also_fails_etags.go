package mutant

// Rules that the faults of ETag, conditional-write and write-answer mutants break besides
// their Breaks: the backend's behaviour contradicts each rule's own statement.
var _ = declareAlsoFails(map[string]map[string]string{
	"prefer-ignored": {
		"entities.key.required.code": "the refusal of an insert without keys must echo Prefer in Preference-Applied, which the mutant ignores",
	},
	"etag-header-dropped": {
		"protocol.get.etag":                 "Get Entity must answer with an ETag header, which the mutant drops",
		"protocol.insert.prefer-no-content": "an insert with return-no-content must answer with an ETag header, which the mutant drops",
		"protocol.update.no-content":        "updates and merges must answer with an ETag header, which the mutant drops",
	},
	"writes-answer-200": {
		"service.acl.accept-xml": "Set Table ACL must answer 204, which the mutant turns into 200",
	},
	"merge-verbs-replace": {
		"protocol.x-method.not-post": "a PUT with X-HTTP-Method: MERGE must be refused, and the mutant performs it as a plain PUT",
	},
	"update-missing-upserts": {
		"modify.update.etag-on-missing": "an update with a specific ETag of a missing entity must create nothing, and the mutant creates it",
	},
	"delete-missing-succeeds": {
		"pattern.eventual.delete-gone": "deleting an entity already deleted must fail with 404, which the mutant answers with 204",
		"concurrency.single-winner":    "of concurrent deletes with the current ETag the later ones find the entity gone and must fail, which the mutant lets succeed",
	},
	"etag-unchanged-on-update": {
		"batch.concurrent": "concurrent transactions conditional on one ETag all commit, since none changes the ETag, " +
			"so that the counters show fewer increments than transactions committed",
		"pattern.impl.optimistic-concurrency": "an update with the ETag read before another client's change must fail with 412, and the mutant's ETag never goes stale",
		"concurrency.single-winner":           "concurrent conditional writes with one ETag all succeed, since no write changes the ETag they carry",
		"concurrency.stale-etag.delete":       "a delete with an ETag from before an update must fail with 412, and the mutant's ETag never goes stale",
		"parallel.merge.counter":              "conditional merges of the counter with an ETag from before another's merge succeed, so that increments are lost",
		"pattern.data-series.concurrent":      "conditional merges of the series with an ETag from before another's merge succeed, so that updates are lost",
		"pattern.index-entities.same-partition-concurrent": "conditional transactions of the index with an ETag from before another's succeed, " +
			"so that employees are lost from the index",
		"pattern.index-entities.same-partition-stale": "the transaction with the index entity's ETag from before it changed must fail with 412, and the mutant's ETag never goes stale",
		"pattern.index-entities.separate-partition": "the updaters' conditional replaces of the index with an ETag from before another's succeed, " +
			"so that the index ends incomplete",
	},
	"if-match-ignored": {
		"batch.concurrent":                            "concurrent transactions conditional on one ETag all commit against the mutant, so that the counters show fewer increments than transactions committed",
		"concurrency.etag.recreated":                  "a write with the ETag of the deleted entity must fail with 412, and the mutant takes every If-Match as *",
		"parallel.merge.counter":                      "conditional merges of the counter never fail with 412 against the mutant, so that increments are lost",
		"pattern.data-series.concurrent":              "conditional merges of the series never fail with 412 against the mutant, so that updates are lost",
		"pattern.index-entities.same-partition-stale": "the transaction with a stale index entity must fail with 412, and the mutant takes every If-Match as *",
		"pattern.index-entities.separate-partition": "the updaters' conditional replaces of the index never fail with 412 against the mutant, " +
			"so that the index ends incomplete",
	},
	"merge-as-replace": {
		"batch.all-kinds":                  "a merge and an insert-or-merge in a transaction must apply as the single merge does, and the mutant replaces",
		"batch.merge-replace":              "a merge in a transaction must keep the properties it does not send, and the mutant drops them",
		"modify.merge.null-ignored":        "a merge must keep a stored property it does not send, and the mutant drops it",
		"pattern.data-series.merge-hour":   "merging one hour must keep the other 23, which the mutant drops",
		"rel.heterogeneous.untyped-update": "merging the raised count into the entity read without its type must keep every other property, which the mutant drops",
	},
	"stale-point-reads": {
		"entities.timestamp.increases": "the Timestamp Get Entity shows after a write is the cached one from before it, so a client never sees it move forward " +
			"(as for modify.timestamp.advances, which the mutant breaks)",
	},
	"replace-as-merge": {
		"batch.all-kinds":                   "a replace and an insert-or-replace in a transaction must apply as the single replace does, and the mutant merges",
		"batch.merge-replace":               "a replace in a transaction must remove the properties it does not send, and the mutant keeps them",
		"entities.property.null-not-stored": "Update Entity with a property sent as null must leave the entity without it, and the mutant keeps the stored value",
		"modify.replace.null-removes":       "Update Entity with a property sent as null must leave the entity without it, and the mutant keeps the stored value",
		"pattern.data-series.replace-drops": "replacing the series with one hour must remove the other 23, which the mutant keeps",
	},
	"upsert-as-insert": {
		"auth.sas.permission.add":           "an upsert through a SAS with only a must be refused with 403, and the mutant performs it as the insert a allows",
		"auth.sas.permission.upsert":        "an upsert through a SAS with only a must be refused with 403, and the mutant performs it as the insert a allows",
		"modify.insert-or-merge.merges":     "Insert Or Merge of an existing entity must merge into it, and the mutant fails it with 409",
		"modify.insert-or-replace.replaces": "Insert Or Replace of an existing entity must replace it, and the mutant fails it with 409",
		"parallel.upsert.durable":           "concurrent upserts of existing entities fail with 409 against the mutant instead of being stored",
	},
	"if-match-any-refused": {
		"auth.account-sas.permissions": "the mutant reads the entity to answer If-Match *, which a SAS without r refuses: a permitted write with If-Match * is refused with 403",
		"auth.sas.permission.delete":   "the mutant reads the entity to answer If-Match *, which a SAS with only d refuses: a permitted delete is refused with 403",
		"auth.sas.permission.update":   "the mutant reads the entity to answer If-Match *, which a SAS with only u refuses: a permitted update is refused with 403",
		"parallel.delete.once":         "of concurrent deletes with If-Match * exactly one must succeed, and the mutant refuses them all with 412",
	},
	"check-then-act": {
		"auth.account-sas.permissions": "the mutant checks If-Match with a read, which a SAS without r refuses: a permitted conditional write is refused with 403",
		"auth.sas.permission.delete":   "the mutant checks If-Match with a read, which a SAS with only d refuses: a permitted delete is refused with 403",
		"auth.sas.permission.update":   "the mutant checks If-Match with a read, which a SAS with only u refuses: a permitted update is refused with 403",
		"parallel.delete.once":         "concurrent deletes with If-Match * all pass the mutant's read check and all succeed",
	},
	"if-match-ignored-on-replace": {
		"concurrency.etag.recreated":          "a replace with the ETag of the deleted entity must fail with 412, and the mutant ignores If-Match on replace",
		"concurrency.single-winner":           "concurrent replaces with the same ETag all succeed when the mutant ignores If-Match on replace",
		"pattern.impl.optimistic-concurrency": "a replace with a stale ETag must fail with 412, and the mutant ignores If-Match on replace",
		"pattern.index-entities.separate-partition": "the updaters' conditional replaces of the index never fail with 412 against the mutant, " +
			"so that concurrent updates overwrite each other and the index ends incomplete",
	},
	"check-then-insert": {
		"pattern.index-entities.separate-partition": "concurrent inserts of one index entity all succeed against the mutant instead of one answering 409, " +
			"so that the updaters overwrite each other and the index ends incomplete",
	},
	"insert-conflict-upserts": {
		"pattern.index-entities.separate-partition": "an insert of an index entity another updater created replaces it instead of answering 409, " +
			"so that the index ends incomplete",
	},
	"concurrent-writes-dropped": {
		"parallel.insert.once":                      "concurrent inserts of one entity are all acknowledged when the mutant drops the later ones",
		"parallel.merge.disjoint":                   "concurrent merges of different properties are acknowledged and dropped, so that not all are kept",
		"pattern.index-entities.separate-partition": "concurrent updates of the index are acknowledged and dropped, so that the index ends incomplete",
	},
})

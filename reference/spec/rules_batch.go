package spec

// Rules of entity group transactions (EVIDENCE.md 4; EGT; the design guide's "Entity group
// transactions" and "Ensure consistency in your stored entities").
//
// Decisions on UNCERTAIN facts:
//   - 101 operations: Storage names operation 99, Azurite 0 (EVIDENCE.md 11.4). The refusal is a
//     MUST; the index a MAY that records the choice.
//   - A body over 4 MiB: the status (400 or 413) and code were not observed; the refusal is
//     a MUST, any of the two statuses is accepted and the code recorded.
//   - Mixed partition keys: the code (CommandsInBatchActOnDifferentPartitions in SDK enums,
//     or InvalidInput) is UNCERTAIN; 400 is the MUST, the code a MAY.
//   - A failing operation: the documentation says 400 with an "N:" prefix, traffic shows
//     the operation's own status (404 for a missing delete) without a prefix (EVIDENCE.md 4).
//     The code must name the failure; the status may be either; a reported index must
//     name the failing operation.

const (
	secEGT         = "entity-group-transactions"
	secConsistency = "ensure-consistency-in-your-stored-entities"
	secCapacity    = "capacity-considerations"
)

func init() {
	AddRules(
		Rule{ID: "batch.all-kinds", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "An entity group transaction MUST accept every write operation (insert, replace, merge, insert-or-replace, insert-or-merge, delete) and apply each as the single operation would.",
			Source:   SrcBatch,
			Sections: []string{secEGT, secModifyEntities}},
		Rule{ID: "batch.results.order", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "A successful transaction MUST return one result per operation, in request order, each with a 2xx status.",
			Source:   SrcBatch,
			Sections: []string{secEGT}},
		Rule{ID: "batch.results.etag", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("2.3"), traffic("E-batch-recorded")},
			Text:     "Each insert, replace, merge and upsert result of a transaction MUST carry the entity's new ETag, the one a following read returns.",
			Source:   SrcBatch,
			Sections: []string{secEGT}},
		Rule{ID: "batch.results.delete-etag", Level: Should, Area: AreaBatch, Feature: FBatch,
			Text:   "The result of a delete in a transaction SHOULD carry no ETag, as Storage sends none.",
			Source: SrcTraffic},
		Rule{ID: "batch.results.insert-status", Level: May, Area: AreaBatch, Feature: FBatch,
			Text:   "The result of an insert in a transaction MAY be 201 with the entity or 204 without it (Prefer: return-no-content).",
			Source: SrcBatch},
		Rule{ID: "batch.limit.operations", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), traffic("E-batch-recorded")},
			Text:     "A transaction of 100 operations MUST be accepted, and one of 101 MUST be refused with 400 InvalidInput, applying nothing.",
			Source:   SrcBatch,
			Sections: []string{secEGT, secCapacity}},
		Rule{ID: "batch.limit.operations-index", Level: May, Area: AreaBatch, Feature: FBatch,
			Text:   "The refusal of a 101-operation transaction MAY name operation 99 (Storage), operation 0 (Azurite) or none.",
			Source: SrcTraffic},
		Rule{ID: "batch.limit.payload", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), doc("E-body-too-large")},
			Text:     "A transaction whose body is under 4 MiB MUST be accepted, and one whose body is over 4 MiB MUST be refused with 413 RequestBodyTooLarge, applying nothing (EVIDENCE.md 13, E-body-too-large).",
			Source:   SrcBatch,
			Sections: []string{secCapacity}},
		Rule{ID: "batch.partition.single", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "A transaction whose operations use more than one PartitionKey MUST be refused with 400, applying nothing.",
			Source:   SrcBatch,
			Sections: []string{secEGT, secConsistency}},
		Rule{ID: "batch.partition.code", Level: May, Area: AreaBatch, Feature: FBatch,
			Text:   "The refusal of a mixed-partition transaction MAY carry CommandsInBatchActOnDifferentPartitions or InvalidInput.",
			Source: SrcBatch},
		Rule{ID: "batch.duplicate-row", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), traffic("E-batch-recorded")},
			Text:     "A transaction that names one entity in two operations, of the same kind or not, MUST be refused with 400 InvalidDuplicateRow, applying nothing.",
			Source:   SrcBatch,
			Sections: []string{secEGT, secCapacity}},
		Rule{ID: "batch.table.single", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "A transaction whose operations address more than one table MUST be refused, applying nothing in any of them.",
			Source:   SrcBatch,
			Sections: []string{secEGT}},
		// EVIDENCE.md 4: "additional change sets will be rejected with status code 400" while the
		// first is processed; whether the first is applied is UNCERTAIN, so either is accepted.
		Rule{ID: "batch.changeset.single", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "A transaction holds one changeset: a second changeset MUST be refused with 400 and MUST NOT be applied (the first MAY be).",
			Source:   SrcBatch,
			Sections: []string{secEGT}},
		Rule{ID: "batch.keys.case-sensitive", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), doc("1.2")},
			Text:   "RowKeys that differ only in letter case name different entities: a transaction holding both MUST succeed.",
			Source: SrcBatch},
		Rule{ID: "batch.atomic", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "When any operation of a transaction fails, none of its operations MUST take effect, wherever the failing one stands.",
			Source:   SrcDesignGuide + "#" + secEGT,
			Sections: []string{secEGT, secConsistency}},
		Rule{ID: "batch.failure.code", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "A failed transaction MUST report the failing operation's error code, with the operation's own status or 400.",
			Source:   SrcBatch,
			Sections: []string{secModifyEntities}},
		Rule{ID: "batch.failure.index", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "When the answer to a failed transaction names an operation, it MUST name the failing one.",
			Source:   SrcDesignGuide + "#" + secModifyEntities,
			Sections: []string{secModifyEntities}},
		Rule{ID: "batch.delete.missing-alone", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{traffic("E-batch-recorded")},
			Text:   "A transaction whose only operation deletes a missing entity MUST fail with 404, with or without an operation index.",
			Source: SrcTraffic},
		Rule{ID: "batch.condition.etag", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), doc("2.3")},
			Text:     "A conditional operation of a transaction MUST honour If-Match: a stale ETag fails the transaction with 412 UpdateConditionNotSatisfied, the current ETag succeeds.",
			Source:   SrcBatch,
			Sections: []string{secManagingConcurrency}},
		Rule{ID: "batch.update.missing", Level: Should, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4"), open("E-batch-open", "the status of an update or merge of a missing entity in a transaction")},
			Text:   "A replace or merge in a transaction of a missing entity SHOULD fail the transaction with 404.",
			Source: SrcBatch},
		Rule{ID: "batch.merge-replace", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "Merge, replace and the upserts inside a transaction MUST keep, remove and ignore null properties exactly as the single operations do.",
			Source:   SrcBatch,
			Sections: []string{secMergeOrReplace}},
		Rule{ID: "batch.retrieve.alone", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:   "A transaction holding a single retrieve MUST return that entity.",
			Source: SrcBatch},
		Rule{ID: "batch.retrieve.mixed", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:   "A transaction holding a retrieve together with other operations MUST be refused, applying nothing.",
			Source: SrcBatch},
		Rule{ID: "batch.empty", Level: May, Area: AreaBatch, Feature: FBatch,
			Text:   "An empty transaction MAY be refused (by the client or the service) or succeed with no results; it MUST change nothing.",
			Source: SrcBatch},
		// EVIDENCE.md 13, E-batch-empty-changeset: one old recording; a MAY.
		Rule{ID: "batch.changeset.empty", Level: May, Area: AreaBatch, Feature: FBatch,
			Text:   "A $batch whose change set holds no operation MAY be answered with 202 and an empty change set (as Storage did) or refused with 4xx; it MUST NOT get a server error and MUST change nothing. The answer is recorded.",
			Source: SrcBatch},
		Rule{ID: "batch.table.missing", Level: Should, Area: AreaBatch, Feature: FBatch,
			Text:   "A transaction against a missing table SHOULD fail with 404 TableNotFound.",
			Source: SrcTableErrors},
		Rule{ID: "batch.isolation", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "Readers MUST never see part of a transaction: a query page of the partition shows either all of its changes or none.",
			Source:   SrcDesignGuide + "#" + secConsistency,
			Sections: []string{secConsistency, secEGT}},
		Rule{ID: "batch.concurrent", Level: Must, Area: AreaBatch, Feature: FBatch, Evidence: []Fact{doc("4")},
			Text:     "Transactions that run concurrently on the same entities MUST each apply wholly or not at all.",
			Source:   SrcDesignGuide + "#" + secEGT,
			Sections: []string{secEGT}},
	)
}

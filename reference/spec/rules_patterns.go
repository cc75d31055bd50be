package spec

// Rules of the design guide's table design patterns and implementation considerations
// (SrcDesignGuide, "Table design patterns" to "Asynchronous and parallel operations"). Each
// rule states what a backend must do for the pattern to keep its promise; the patterns'
// costs (hot partitions, scans, round trips) are measured by the benchmarks, not here.
//
// Decisions on UNCERTAIN facts:
//   - Operations on a table being deleted: the documentation says 409 TableBeingDeleted,
//     Storage is also seen answering 404; either refusal is accepted, and the rule is that
//     no entity of the deleted table comes back.
//   - Creating a table again right after deleting it: Storage refuses for 40 seconds or
//     more, emulators at once or never; the rule is a MAY that records the choice.
//   - Writing to a missing table: TableNotFound (TERR) or ResourceNotFound; 404 is the MUST.
//   - The index a failed transaction names is UNCERTAIN (EVIDENCE.md 4); a MAY that records it.

func init() {
	guide := func(anchor string) string { return SrcDesignGuide + "#" + anchor }
	const (
		patterns    = "table-design-patterns"
		intra       = "intra-partition-secondary-index-pattern"
		inter       = "inter-partition-secondary-index-pattern"
		eventual    = "eventually-consistent-transactions-pattern"
		index       = "index-entities-pattern"
		denorm      = "denormalization-pattern"
		compound    = "compound-key-pattern"
		logTail     = "log-tail-pattern"
		bulkDelete  = "high-volume-delete-pattern"
		series      = "data-series-pattern"
		wide        = "wide-entities-pattern"
		large       = "large-entities-pattern"
		prepend     = "prependappend-anti-pattern"
		logData     = "log-data-anti-pattern"
		impl        = "implementation-considerations"
		retrieve    = "retrieve-entities"
		segments    = "retrieve-large-numbers-of-entities-from-a-query"
		projection  = "server-side-projection"
		modify      = "modify-entities"
		concurrency = "managing-concurrency"
		mergeOrRepl = "merge-or-replace"
		async       = "asynchronous-and-parallel-operations"
		consistency = "ensure-consistency-in-your-stored-entities"
		egt         = "entity-group-transactions"
		sorting     = "sort-data-in-table-storage"
		cost        = "cost-considerations"
		capacity    = "capacity-considerations"
		writes      = "optimize-the-performance-of-insert-update-and-delete-operations"
	)
	AddRules(
		// Intra-partition secondary index.
		Rule{ID: "pattern.intra-index.point-query", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With several copies of an entity in one partition under differently prefixed RowKeys (empid_, email_), a point query on any copy's RowKey MUST return exactly that copy.",
			Source:   guide(intra),
			Sections: []string{intra, patterns}},
		Rule{ID: "pattern.intra-index.range", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A RowKey range query within the partition MUST return exactly the copies of one index whose keys lie in the range, with ge and le bounds inclusive and lt exclusive, in RowKey order: the index's own sort order.",
			Source:   guide(intra),
			Sections: []string{intra, sorting}},
		Rule{ID: "pattern.intra-index.batch-update", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Updating every copy of an entity in one entity group transaction MUST change all the copies, or none of them when any operation of the transaction fails.",
			Source:   guide(intra),
			Sections: []string{intra, consistency, egt}},
		Rule{ID: "pattern.intra-index.partial-copy", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An index copy that stores only the properties its queries need MUST come back with exactly those, while the full copy keeps all of its own: no schema ties the copies together.",
			Source:   guide(intra),
			Sections: []string{intra, cost}},

		// Inter-partition secondary index.
		Rule{ID: "pattern.inter-index.point-query", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With the copies of an entity in different partitions (empid_Sales, email_Sales) or different tables, a point query on each copy's keys MUST return that copy.",
			Source:   guide(inter),
			Sections: []string{inter}},
		Rule{ID: "pattern.inter-index.range", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A RowKey range query bounded to one index partition MUST return only that partition's copies within the range, in RowKey order, never a copy of the other index.",
			Source:   guide(inter),
			Sections: []string{inter, sorting}},
		Rule{ID: "pattern.inter-index.stepwise-update", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Copies in different partitions are updated one request at a time: each write MUST be visible to the next read, so the copies disagree between the steps and agree after the last one.",
			Source:   guide(inter),
			Sections: []string{inter, consistency}},

		// Eventually consistent transactions.
		Rule{ID: "pattern.eventual.converges", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An archive worker whose steps are idempotent (Insert Or Replace into the archive table, then a delete from the current table that accepts 404) MUST converge when it crashes between any two steps and runs again: the employee ends once in the archive table, unchanged, and nowhere in the current table.",
			Source:   guide(eventual),
			Sections: []string{eventual, consistency}},
		Rule{ID: "pattern.eventual.upsert-repeatable", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Insert Or Replace of the same entity repeated MUST succeed every time and leave one entity holding what was sent last.",
			Source:   guide(eventual),
			Sections: []string{eventual, mergeOrRepl}},
		Rule{ID: "pattern.eventual.delete-gone", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Deleting an entity that an earlier attempt already deleted MUST fail with 404 (ResourceNotFound or the documented EntityNotFound, MissingEntityAnswers) and change nothing, so that a retrying worker can take it as done.",
			Source:   guide(eventual),
			Sections: []string{eventual}},
		Rule{ID: "pattern.eventual.no-isolation", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Between the worker's steps each table MUST show its own state at once: after the copy into the archive and before the delete, a reader sees the employee in both tables.",
			Source:   guide(eventual),
			Sections: []string{eventual}},
		Rule{ID: "pattern.eventual.missing-table", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A write to a table that does not exist MUST fail with 404 every time and create nothing, so that a worker's retries end with the message in a poison queue.",
			Source:   guide(eventual),
			Sections: []string{eventual}},

		// Index entities.
		Rule{ID: "pattern.index-entities.external-list", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With the lists of employee keys kept outside the table (option 1, a blob per last name), point queries on the listed PartitionKey and RowKey pairs MUST return exactly the employees with that last name.",
			Source:   guide(index),
			Sections: []string{index}},
		Rule{ID: "pattern.index-entities.same-partition-add", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Adding an employee in one transaction with an ETag-conditional replace of the index entity of its last name in the same partition (option 2) MUST store both.",
			Source:   guide(index),
			Sections: []string{index, egt}},
		Rule{ID: "pattern.index-entities.same-partition-stale", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "When the index entity changed after it was read, that transaction MUST fail with 412 UpdateConditionNotSatisfied and store neither the employee nor the index change, and the retry from a fresh read MUST succeed.",
			Source:   guide(index),
			Sections: []string{index, concurrency}},
		Rule{ID: "pattern.index-entities.same-partition-concurrent", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Concurrent updaters that each add an employee with such a transaction and retry on 412 MUST end with the index listing every added employee exactly once and every employee stored.",
			Source:   guide(index),
			Sections: []string{index, concurrency}},
		Rule{ID: "pattern.index-entities.same-partition-rename", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Changing an employee's last name in one transaction over the employee, the old name's index entity and the new name's index entity, each conditional on its ETag, MUST move the id between the lists atomically.",
			Source:   guide(index),
			Sections: []string{index, egt}},
		Rule{ID: "pattern.index-entities.separate-partition", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With the index entities in a partition of their own (option 3), concurrent updaters using inserts (409 when another created the index entity first) and ETag-conditional replaces (412 when another changed it) and retrying MUST end with a complete index that finds employees of every department.",
			Source:   guide(index),
			Sections: []string{index, concurrency}},

		// Denormalization.
		Rule{ID: "pattern.denormalization.point-query", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A department entity that carries a copy of its manager's details MUST return all of them, and its own properties, to one point query.",
			Source:   guide(denorm),
			Sections: []string{denorm}},
		Rule{ID: "pattern.denormalization.batch-update", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Updating the manager's employee entity and the department's copy of the manager's details in one transaction MUST change both, or neither when either operation fails.",
			Source:   guide(denorm),
			Sections: []string{denorm, consistency}},

		// Compound key.
		Rule{ID: "pattern.compound-key.range", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "RowKeys composed of the employee id and the review year MUST let one range query (RowKey ge 'empid_000123' and lt 'empid_000124') return exactly that employee's entities, in year order, and none of the next employee's.",
			Source:   guide(compound),
			Sections: []string{compound}},
		Rule{ID: "pattern.compound-key.projection", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A compound-key range query with $select MUST return, of each entity, only the selected properties.",
			Source:   guide(compound),
			Sections: []string{compound, projection}},

		// Log tail.
		Rule{ID: "pattern.log-tail.newest-first", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With RowKeys of zero-padded inverted ticks, the first page of a partition query with $top=10 MUST hold the ten newest entities, newest first.",
			Source:   guide(logTail),
			Sections: []string{logTail, sorting}},
		Rule{ID: "pattern.log-tail.next-page", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "When more entities remain, that page MUST carry a continuation, and following it MUST go on with the next newest: $top bounds a page, not the query (the Go SDK's pager keeps going past $top, EVIDENCE.md 12 #13).",
			Source:   guide(logTail),
			Sections: []string{logTail, segments}},
		Rule{ID: "pattern.log-tail.since", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A query for RowKey lt the inverted ticks of a time T MUST return exactly the entities newer than T, the one logged at T excluded.",
			Source:   guide(logTail),
			Sections: []string{logTail}},
		Rule{ID: "pattern.log-tail.string-order", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "RowKeys MUST sort as strings, character by character, never as numbers: unpadded tick counts come back in the order of their characters, which is why the pattern pads them.",
			Source:   guide(logTail),
			Sections: []string{logTail, sorting}},

		// High volume delete.
		Rule{ID: "pattern.high-volume-delete.drop-table", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Deleting a day's table MUST remove all of its entities with that one operation: afterwards a query against it fails (404, or 409 TableBeingDeleted) and returns no entity.",
			Source:   guide(bulkDelete),
			Sections: []string{bulkDelete, writes}},
		Rule{ID: "pattern.high-volume-delete.others-kept", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Deleting one day's table MUST leave the other days' tables and every one of their entities as they were.",
			Source:   guide(bulkDelete),
			Sections: []string{bulkDelete}},
		Rule{ID: "pattern.high-volume-delete.name-reuse", Level: May, Area: AreaPatterns,
			Text:     "Creating a table under the name of a table just deleted MAY fail with 409 TableBeingDeleted for a while (Storage: at least 40 seconds) or MAY succeed at once; the guide advises new names.",
			Source:   SrcDeleteTable,
			Sections: []string{bulkDelete}},
		Rule{ID: "pattern.high-volume-delete.recreated-empty", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A table created again under a deleted table's name MUST start empty.",
			Source:   guide(bulkDelete),
			Sections: []string{bulkDelete}},
		Rule{ID: "pattern.high-volume-delete.new-name", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A table under a new name MUST be creatable and usable at once after another table was deleted.",
			Source:   guide(bulkDelete),
			Sections: []string{bulkDelete}},
		Rule{ID: "pattern.high-volume-delete.batched-deletes", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "The alternative the guide weighs, a scan for the old entities and deletes of up to 100 per transaction and partition, MUST remove exactly the old entities and keep the others.",
			Source:   guide(bulkDelete),
			Sections: []string{bulkDelete, writes, egt}},

		// Data series.
		Rule{ID: "pattern.data-series.one-entity", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity with one property per hour MUST return the whole 24-hour series to one point query, the same counts as the 24 entities of the one-entity-per-hour layout.",
			Source:   guide(series),
			Sections: []string{series}},
		Rule{ID: "pattern.data-series.merge-hour", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Merging one hour's property into the series entity MUST change that hour only and keep the other 23.",
			Source:   guide(series),
			Sections: []string{series, mergeOrRepl}},
		Rule{ID: "pattern.data-series.replace-drops", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Replacing the series entity with only one hour's property MUST remove the other 23, which is why the pattern merges.",
			Source:   guide(mergeOrRepl),
			Sections: []string{series, mergeOrRepl}},
		Rule{ID: "pattern.data-series.concurrent", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Clients that update hours of one series entity at the same time with ETag-conditional merges, retrying on 412, MUST lose no update.",
			Source:   guide(series),
			Sections: []string{series, concurrency}},

		// Wide entities.
		Rule{ID: "pattern.wide-entities.too-many", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity with 365 custom properties MUST be refused with 400 TooManyProperties and not stored.",
			Source:   guide(wide),
			Sections: []string{wide, capacity}},
		Rule{ID: "pattern.wide-entities.batch", Level: Must, Area: AreaPatterns, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A logical entity split into physical entities of at most 252 properties MUST be written atomically by one transaction: all parts stored, or none when one part is invalid or stale.",
			Source:   guide(wide),
			Sections: []string{wide, egt}},
		Rule{ID: "pattern.wide-entities.read", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "The physical entities of a logical entity MUST come back to point queries, or to one partition query, together holding every value written.",
			Source:   guide(wide),
			Sections: []string{wide}},

		// Large entities.
		Rule{ID: "pattern.large-entities.value-too-large", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity with a Binary value over 64 KiB (a photo) MUST be refused with 400 PropertyValueTooLarge and not stored.",
			Source:   guide(large),
			Sections: []string{large, capacity}},
		Rule{ID: "pattern.large-entities.entity-too-large", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity whose values total more than 1 MiB MUST be refused with 400 EntityTooLarge and not stored.",
			Source:   guide(large),
			Sections: []string{large, capacity}},
		Rule{ID: "pattern.large-entities.inline-limit", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A Binary value of exactly 64 KiB MUST be stored and come back byte for byte.",
			Source:   guide(large),
			Sections: []string{large, capacity}},
		Rule{ID: "pattern.large-entities.blob-pointer", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity that stores the address of a blob in place of a large value MUST give the address back unchanged, so that the entity and the blob together restore the data.",
			Source:   guide(large),
			Sections: []string{large}},

		// Prepend/append anti-pattern.
		Rule{ID: "pattern.prepend-append.hot-partition", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Appending every event of an hour to one partition MUST still give correct results: a partition query returns exactly the hour's events. Its cost, a hot partition, is measured by the benchmarks.",
			Source:   guide(prepend),
			Sections: []string{prepend}},
		Rule{ID: "pattern.prepend-append.spread", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With events spread over department-and-employee partitions, one employee's events of an hour MUST come back to a range query, and a RowKey-range scan over all partitions MUST return the same events as the hot layout. The cost of the scan is measured by the benchmarks.",
			Source:   guide(prepend),
			Sections: []string{prepend}},

		// Log data anti-pattern.
		Rule{ID: "pattern.log-data.hour-partition", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Log entries in an hour partition MUST be found by a range query within it: exactly the Error and Critical messages logged from 15:04 up to 15:06. Its cost, a hot partition, is measured by the benchmarks.",
			Source:   guide(logData),
			Sections: []string{logData}},
		Rule{ID: "pattern.log-data.scan", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With log entries spread over source partitions, a scan filtered on the RowKey range and followed across continuations MUST return the same messages. The cost of scanning every partition is measured by the benchmarks.",
			Source:   guide(logData),
			Sections: []string{logData, segments}},

		// Implementation considerations.
		Rule{ID: "pattern.impl.point-query", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A point query MUST return the entity with all its properties, and a point query for a missing entity MUST fail with 404 ResourceNotFound or the documented EntityNotFound (MissingEntityAnswers; the guide's null result).",
			Source:   guide("run-a-point-query-by-using-the-storage-client-library"),
			Sections: []string{impl, retrieve}},
		Rule{ID: "pattern.impl.range-query", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A query with PartitionKey eq and RowKey ge 'B' and lt 'C' MUST return exactly the partition's entities whose RowKey starts with B.",
			Source:   guide("retrieve-multiple-entities-by-using-linq"),
			Sections: []string{retrieve}},
		Rule{ID: "pattern.impl.segments", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Following the continuations of a query with $top=50 MUST return every matching entity exactly once, no page holding more than 50 (a shorter page with a continuation is allowed).",
			Source:   guide(segments),
			Sections: []string{segments}},
		Rule{ID: "pattern.impl.saved-continuation", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A continuation saved to storage and later sent with the same query by a new client MUST resume where the earlier page ended.",
			Source:   guide(segments),
			Sections: []string{segments}},
		Rule{ID: "pattern.impl.projection", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A query with $select=Email MUST return Email and no other custom property of the employees it selects.",
			Source:   guide(projection),
			Sections: []string{projection}},
		Rule{ID: "pattern.impl.merge-or-replace", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Replace MUST remove the properties it does not send, and Merge MUST keep them and change only those it sends.",
			Source:   guide(mergeOrRepl),
			Sections: []string{mergeOrRepl, modify}},
		Rule{ID: "pattern.impl.update-needs-entity", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Replace and Merge MUST fail with 404 when the entity does not exist, and Insert Or Replace and Insert Or Merge MUST create it.",
			Source:   guide(mergeOrRepl),
			Sections: []string{mergeOrRepl, modify}},
		Rule{ID: "pattern.impl.optimistic-concurrency", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An update conditional on the ETag read earlier MUST fail with 412 once another client changed the entity, and If-Match * MUST bypass the check.",
			Source:   guide(concurrency),
			Sections: []string{concurrency, modify}},
		Rule{ID: "pattern.impl.failed-operation-index", Level: May, Area: AreaPatterns, Feature: FBatch,
			Text:     "A failed transaction MAY name the index of the operation that failed; when it names one, it MUST be that operation's index.",
			Source:   guide(modify),
			Sections: []string{modify, impl}},
		Rule{ID: "pattern.impl.parallel-partitions", Level: Must, Area: AreaPatterns, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Queries run in parallel, one per partition, MUST together return the same entities as one sequential scan of the table.",
			Source:   guide(async),
			Sections: []string{async, impl}},
	)
}

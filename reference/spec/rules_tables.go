package spec

// Rules of tables: names, uniqueness, create, delete and Query Tables (EVIDENCE.md 1.1, 2.2,
// 5.2; the design guide's "About Azure Table storage" and "Capacity considerations").
//
// Decisions on UNCERTAIN facts:
//   - A name of the wrong length: the refusal (400) is a MUST; its code (InvalidResourceName
//     on Storage? OutOfRangeInput on Azurite) is recorded, not asserted. The same holds for a
//     leading digit and for characters other than the underscore, whose code real traffic
//     shows (InvalidResourceName).
//   - The reserved name "tables": the documentation says "404 (Bad Request)" (EVIDENCE.md 11.2);
//     400 and 404 are both accepted and the choice is recorded.
//   - An entity operation on a missing table: 404 is a MUST; TableNotFound (TERR) and
//     ResourceNotFound are both accepted and recorded.
//   - Reusing a deleted table's name: 409 TableBeingDeleted "for at least 40 seconds" (DT) is
//     allowed, so the rule is a MAY that polls for a bounded time and records the outcome.

// Design-guide sections that the data-model rules (tables, entities, types, limits, auth)
// cover.
const (
	dmSecAbout      = "about-azure-table-storage"
	dmSecPartitions = "table-partitions"
	dmSecCapacity   = "capacity-considerations"
	dmSecCost       = "cost-considerations"
	dmSecDesign     = "guidelines-for-table-design"
	dmSecEncrypt    = "encrypt-table-data"
	dmSecSAS        = "control-access-with-shared-access-signatures"
	dmSecHetero     = "work-with-heterogeneous-entity-types"
)

func init() {
	AddRules(
		Rule{ID: "tables.create.listed", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2")},
			Text:     "Create Table with a valid new name MUST succeed, and Query Tables MUST then list the table.",
			Source:   SrcCreateTable,
			Sections: []string{dmSecAbout, dmSecCapacity}},
		Rule{ID: "tables.isolation", Level: Must, Area: AreaTables, Evidence: []Fact{doc("E-tables-independent")},
			Text:   "An operation on one table MUST never change another table: the entities of a neighbouring table stay exactly as written across a failed transaction, a refused write and the deletion of another table (E-tables-independent).",
			Source: SrcBatch},
		Rule{ID: "tables.name.valid", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "A table name of 3 to 63 ASCII letters and digits that starts with a letter MUST be accepted, at both ends of the length range.",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.length", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "A table name shorter than 3 or longer than 63 characters MUST be refused with 400 (the code is recorded: InvalidResourceName or OutOfRangeInput).",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.charset", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1"), traffic("E-tables-recorded")},
			Text:   "A table name holding a character other than an ASCII letter or digit MUST be refused with 400; for an underscore the code MUST be InvalidResourceName.",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.leading-digit", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "A table name that starts with a digit MUST be refused with 400 (the code is recorded).",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.reserved", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "Creating the reserved table name \"tables\" MUST be refused, with 400 or 404 (the documentation names both; the status is recorded).",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.create.conflict", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2"), traffic("E-table-ops-recorded")},
			Text:   "Creating a table whose name already exists MUST fail with 409 TableAlreadyExists.",
			Source: SrcCreateTable},
		Rule{ID: "tables.name.case-insensitive", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "Table names MUST be unique regardless of letter case: creating a name that differs from an existing one only in case MUST fail with 409 TableAlreadyExists.",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.case-insensitive-access", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "A table MUST be reachable for entity operations and for Delete Table through its name in any letter case.",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.name.case-preserved", Level: Must, Area: AreaTables, Evidence: []Fact{doc("1.1")},
			Text:   "Query Tables MUST return a table name with the letter case it was created with.",
			Source: SrcDataModel + "#table-names"},
		Rule{ID: "tables.delete.removes", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2")},
			Text:     "Delete Table MUST succeed on an existing table, after which Query Tables MUST no longer list it and entity operations on it MUST fail (404, or 409 TableBeingDeleted).",
			Source:   SrcDeleteTable,
			Sections: []string{dmSecAbout}},
		Rule{ID: "tables.delete.not-found", Level: Must, Area: AreaTables, Evidence: []Fact{traffic("E-table-ops-recorded")},
			Text:   "Deleting a table that does not exist MUST fail with 404, with ResourceNotFound (recorded from Azure Storage) or TableNotFound (the error-code table's code for a missing table); the code is recorded.",
			Source: SrcDeleteTable},
		Rule{ID: "tables.missing.entity-operations", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2")},
			Text:   "Every entity operation on a table that does not exist MUST fail with 404 (TableNotFound per the documentation or ResourceNotFound; the code is recorded).",
			Source: SrcTableErrors},
		Rule{ID: "tables.query.filter", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2"), doc("3.1")},
			Text:   "Query Tables with a $filter on TableName MUST return exactly the tables that satisfy it: an eq filter one table, a ge/lt prefix range every table with the prefix and no other.",
			Source: SrcQueryTables},
		Rule{ID: "tables.query.paging", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2"), doc("3.5")},
			Text:     "Query Tables with $top MUST return at most $top tables per page and a NextTableName while tables remain; following NextTableName MUST return every matching table exactly once and end with a page without NextTableName.",
			Source:   SrcQueryTables,
			Sections: []string{dmSecCapacity}},
		Rule{ID: "tables.delete.name-reuse", Level: May, Area: AreaTables,
			Text:   "Re-creating the name of a just-deleted table MAY fail with 409 TableBeingDeleted for a while; any other answer than success or TableBeingDeleted is wrong (the outcome within the polling bound is recorded).",
			Source: SrcDeleteTable},
		Rule{ID: "tables.delete.fresh-on-reuse", Level: Must, Area: AreaTables, Evidence: []Fact{doc("2.2")},
			Text:     "A table re-created with the name of a deleted table MUST hold none of the deleted table's entities.",
			Source:   SrcDeleteTable,
			Sections: []string{dmSecAbout}},
	)
}

package spec

// Rules of the design guide's "Model relationships" and "Work with heterogeneous entity
// types": one-to-many in the guide's three layouts, one-to-one, joins in the client,
// inheritance, entity types told apart by a property or a RowKey prefix, and moving an
// entity between partitions.
//
// Decision on an UNCERTAIN fact: the code of a refused cross-partition transaction
// (CommandsInBatchActOnDifferentPartitions in SDK enums, or InvalidInput) is not settled
// (EVIDENCE.md 4); 400 is the MUST and the specs record the code.

func init() {
	guide := func(anchor string) string { return SrcDesignGuide + "#" + anchor }
	const (
		model       = "model-relationships"
		oneToMany   = "one-to-many-relationships"
		oneToOne    = "one-to-one-relationships"
		join        = "join-in-the-client"
		inheritance = "inheritance-relationships"
		hetero      = "work-with-heterogeneous-entity-types"
		egt         = "entity-group-transactions"
		consistency = "ensure-consistency-in-your-stored-entities"
		eventual    = "eventually-consistent-transactions-pattern"
		denorm      = "denormalization-pattern"
		large       = "large-entities-pattern"
	)
	AddRules(
		Rule{ID: "rel.one-to-many.same-partition", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With a department entity and its employee entities in one partition, one partition query MUST return the department and every one of its employees, told apart by their keys.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, model}},
		Rule{ID: "rel.one-to-many.count-in-batch", Level: Must, Area: AreaRelationships, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Inserting an employee and raising the department's EmployeeCount in one transaction MUST keep the count equal to the number of employees; when the insert fails (409, the employee exists) the count MUST stay as it was.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, egt, consistency}},
		Rule{ID: "rel.one-to-many.separate-partitions", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With departments and employees in different partitions or tables, a query for the department and a query for its employees MUST together return the related entities.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, model}},
		Rule{ID: "rel.one-to-many.cross-partition-batch", Level: Must, Area: AreaRelationships, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A transaction that inserts an employee in one partition and updates its department in another MUST be refused with 400 and change nothing: separate partitions cannot be kept consistent by a transaction.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, egt}},
		Rule{ID: "rel.one-to-many.denormalized", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Employee entities that carry their department's details MUST return them with the employee to one query.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, denorm}},
		Rule{ID: "rel.one-to-many.denormalized-update", Level: Must, Area: AreaRelationships, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Changing a department's manager in the denormalized layout, in transactions of at most 100 employees each, MUST update every employee of the department: afterwards none shows the old manager.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, denorm, egt}},
		Rule{ID: "rel.one-to-one.key-convention", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Two entities linked by a key convention (one partition, RowKeys id and id_photo) MUST come back together to one range query, and each to its point query.",
			Source:   guide(oneToOne),
			Sections: []string{oneToOne, large}},
		Rule{ID: "rel.one-to-one.explicit-reference", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity that stores the PartitionKey and RowKey of its related entity in another table MUST lead to it with one point query, and the related entity's own reference MUST lead back.",
			Source:   guide(oneToOne),
			Sections: []string{oneToOne}},
		Rule{ID: "rel.join-in-client", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A small lookup table read once MUST come back whole, and joining it in the client with the employees a query returns MUST give each employee its department's details.",
			Source:   guide(join),
			Sections: []string{join}},
		Rule{ID: "rel.inheritance.entity-type", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Entities of several classes of one hierarchy stored in one table with an EntityType property MUST be selected by a filter on EntityType, each coming back with the properties of its own class only.",
			Source:   guide(inheritance),
			Sections: []string{inheritance, hetero}},
		Rule{ID: "rel.heterogeneous.type-property", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A filter on PartitionKey and EntityType eq 'Employee' MUST return exactly the partition's employees, and EntityType eq 'Department' exactly its department.",
			Source:   guide(hetero),
			Sections: []string{hetero}},
		Rule{ID: "rel.heterogeneous.rowkey-prefix", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "With the entity type prefixed to the RowKey (EMPLOYEE_, DEPARTMENT_), a prefix range query MUST return exactly the entities of that type, even where entities of two types share an id, and a partition query MUST return each type's entities grouped together.",
			Source:   guide(hetero),
			Sections: []string{hetero}},
		Rule{ID: "rel.heterogeneous.mixed-property-types", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "One property name MUST be able to hold different EDM types on entities of different types in one table, each coming back with its own type.",
			Source:   guide(hetero),
			Sections: []string{hetero}},
		Rule{ID: "rel.heterogeneous.untyped-update", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity read without knowing its type, checked for an EmployeeCount property and merged back with its ETag and the count raised MUST keep every other property.",
			Source:   guide(hetero),
			Sections: []string{hetero}},
		Rule{ID: "rel.move.batch-refused", Level: Must, Area: AreaRelationships, Feature: FBatch, Evidence: []Fact{doc("E-design-guide")},
			Text:     "Moving an employee to another department in one transaction (a delete in the old partition, an insert in the new) MUST be refused with 400 and leave the employee where it was.",
			Source:   guide(oneToMany),
			Sections: []string{oneToMany, egt}},
		Rule{ID: "rel.move.two-steps", Level: Must, Area: AreaRelationships, Evidence: []Fact{doc("E-design-guide")},
			Text:     "The same move done as two idempotent steps (Insert Or Replace in the new partition, then a delete in the old that accepts 404) MUST converge when it crashes between them and runs again: the employee ends in the new partition only.",
			Source:   guide(eventual),
			Sections: []string{oneToMany, eventual}},
	)
}

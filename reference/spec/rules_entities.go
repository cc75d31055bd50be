package spec

// Rules of entities: keys, system properties and property names (EVIDENCE.md 1.2, 1.3, 2.4;
// the design guide's "About Azure Table storage", "Table partitions" and "Guidelines for
// table design").
//
// Decisions on UNCERTAIN facts:
//   - A forbidden key character: the refusal with 400 is a MUST (the characters are
//     documented as not allowed); the code, OutOfRangeInput (Storage, in a batch) or
//     InvalidInput (Azurite), is recorded.
//   - An empty RowKey (an empty PartitionKey is CONFIRMED-TRAFFIC): a MAY that accepts a
//     refusal with 400 or a stored entity that reads back, and records which.
//   - Property names outside the C# identifier rules, and system names in another letter
//     case: how strictly Storage enforces them is not known, so the rules are MAYs that
//     accept a refusal with 400 or a property stored under exactly the name sent.
//   - A missing key in the body and a duplicate property: the status 400 is a MUST, the
//     code is recorded.

func init() {
	AddRules(
		Rule{ID: "entities.key.required", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:   "An insert whose body lacks PartitionKey or RowKey MUST be refused with 400 (the code is recorded).",
			Source: SrcDataModel + "#system-properties"},
		Rule{ID: "entities.key.required.code", Level: Must, Area: AreaEntities, Evidence: []Fact{traffic("E-insert-no-keys")},
			Text:   "An insert whose body has neither PartitionKey nor RowKey MUST be refused with 400 PropertiesNeedValue and store nothing; the refusal MUST carry Preference-Applied echoing the request's Prefer (E-insert-no-keys).",
			Source: SrcGoInvalidEntity},
		Rule{ID: "entities.key.empty-partition-key", Level: Must, Area: AreaEntities, Evidence: []Fact{traffic("E-keys-recorded")},
			Text:   "An empty PartitionKey MUST be accepted, and the entity MUST read back through Get Entity and Query Entities.",
			Source: SrcDataModel + "#partitionkey-property"},
		Rule{ID: "entities.key.empty-row-key", Level: May, Area: AreaEntities,
			Text:   "An empty RowKey MAY be accepted; if it is, the entity MUST read back with that key, and if not, the refusal MUST be a 400 (the choice is recorded).",
			Source: SrcDataModel + "#rowkey-property"},
		Rule{ID: "entities.key.case-sensitive", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "Keys MUST be stored and compared with their letter case: an entity reads back under the keys it was written with, and keys that differ only in case name distinct entities.",
			Source:   SrcDataModel + "#partitionkey-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.key.identity", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("E-design-guide")},
			Text:     "An entity MUST be identified by its table, PartitionKey and RowKey together: the same RowKey in two partitions, or the same keys in two tables (duplicate copies of data), name distinct entities.",
			Source:   SrcDesignGuide + "#" + dmSecPartitions,
			Sections: []string{dmSecAbout, dmSecPartitions, dmSecCost}},
		Rule{ID: "entities.key.forbidden-characters", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:   "A PartitionKey or RowKey holding '/', '\\', '#', '?', a control character U+0000-U+001F or U+007F-U+009F MUST be refused with 400 (OutOfRangeInput or InvalidInput; the code is recorded) and not stored.",
			Source: SrcDataModel + "#characters-disallowed-in-key-fields"},
		Rule{ID: "entities.key.allowed-characters", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "Keys holding any other characters (quotes, spaces, URL delimiters, non-ASCII letters, characters outside the Basic Multilingual Plane) MUST be stored exactly and reachable by Get, Update, Merge, Delete and a key filter.",
			Source:   SrcDataModel + "#characters-disallowed-in-key-fields",
			Sections: []string{dmSecDesign}},
		Rule{ID: "entities.partitions.many", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("E-design-guide")},
			Text:     "A table MUST hold entities in any number of partitions, each reachable by a point query.",
			Source:   SrcDesignGuide + "#" + dmSecCapacity,
			Sections: []string{dmSecPartitions, dmSecCapacity}},
		Rule{ID: "entities.timestamp.set", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "The service MUST set every entity's Timestamp when the entity is written, within the permitted clock skew of the client's clock, and return it with Get Entity and Query Entities.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.timestamp.client-ignored", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "A Timestamp sent by the client MUST be ignored: the entity is stored with the service's Timestamp and no custom property of that name.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.timestamp.increases", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "Every write of an entity (replace, merge and both upserts) MUST give it a Timestamp later than the one it had.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.etag.present", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2"), traffic("2.4")},
			Text:     "An entity MUST carry a non-empty ETag: the one returned by the write that stored it, equal as an opaque string to the one Get Entity and Query Entities return.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.etag.changes", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("2.3"), traffic("2.4")},
			Text:     "Every write of an entity MUST give it an ETag different from every ETag it had before, and reads MUST return the latest one.",
			Source:   SrcUpdateEntity,
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.reads.stable", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.2")},
			Text:     "Reading an entity MUST change neither its ETag nor its Timestamp.",
			Source:   SrcDataModel + "#timestamp-property",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.schema.heterogeneous", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:     "One table and one partition MUST accept entities with different sets of properties, each read back with exactly its own properties.",
			Source:   SrcDataModel + "#tables-entities-and-properties",
			Sections: []string{dmSecAbout, dmSecDesign, dmSecHetero}},
		// Every other comparison of an entity read back judges only the properties its spec
		// wrote (suites/matchers.EntityDiff): a member nobody wrote fails this rule alone.
		Rule{ID: "entities.property.no-extra", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("6")},
			Text:     "An entity read back (Get Entity, Query Entities, the answer to Insert Entity) MUST carry no custom property that was never written to it: besides the system properties and their metadata, only the properties written.",
			Source:   SrcDataModel + "#tables-entities-and-properties",
			Sections: []string{dmSecAbout}},
		Rule{ID: "entities.schema.type-per-entity", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:     "The same property name MUST be able to hold values of different types in different entities of one table, each read back with its own type.",
			Source:   SrcDataModel + "#tables-entities-and-properties",
			Sections: []string{dmSecAbout, dmSecHetero}},
		Rule{ID: "entities.property.name-case", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:   "Property names MUST be case-sensitive: names that differ only in case are distinct properties of one entity.",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "entities.property.name-identifier", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:   "A property name that is a valid C# identifier (letters of any script, digits after the first character, underscores) MUST be accepted and read back unchanged.",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "entities.property.name-invalid", Level: May, Area: AreaEntities,
			Text:   "A property name that is not a C# identifier (a hyphen, a space, a leading digit, a control or private-use character) MAY be refused with 400; a backend that accepts it MUST store it under exactly that name (the choice is recorded).",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "entities.property.name-system-case", Level: May, Area: AreaEntities,
			Text:   "A custom property whose name is a system property name in another letter case (partitionkey, ROWKEY, timestamp) MAY be refused with 400; if accepted it MUST be stored as an ordinary property under exactly that name (the choice is recorded).",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "entities.property.name-cosmos-reserved", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:   "The property names id, ID, rid, etag and ResourceId MUST be accepted as ordinary custom properties.",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "entities.property.null-not-stored", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:   "A property sent with a null value MUST NOT be stored by Insert Entity, Update Entity or Insert Or Replace Entity: the entity reads back without it.",
			Source: SrcUpdateEntity},
		Rule{ID: "entities.property.duplicate", Level: Must, Area: AreaEntities, Evidence: []Fact{doc("1.3")},
			Text:   "An entity body naming one property twice MUST be refused with 400 (DuplicatePropertiesSpecified is documented; the code is recorded) and not stored.",
			Source: SrcTableErrors},
	)
}

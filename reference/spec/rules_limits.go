package spec

// Rules of the data model's limits (EVIDENCE.md 1.2, 1.3, 1.4, 1.5, 8; the design guide's
// "Capacity considerations"). Each limit is checked at exactly its value and one unit over,
// through every write that can carry it (Insert, Update, Merge and the two upserts).
//
// Decisions on UNCERTAIN facts:
//   - Key size: "up to 1 KiB", counted in an unknown unit (EVIDENCE.md 11.1). 512 characters
//     fit under every reading and MUST be accepted; more than 1,024 characters exceed every
//     reading and MUST be refused with 400 (the code is recorded); 513 to 1,024 characters is
//     a MAY that records the outcome.
//   - Entity size: the documented accounting (SIZEBLOG) is an estimate and the exact edge is
//     not known (EVIDENCE.md 11.11). An entity clearly under 1 MiB MUST be accepted and one
//     clearly over MUST be refused with EntityTooLarge; the exact edge is a MAY.
//   - A merge that pushes a stored entity over a limit: the refusal with 400 is a MUST, the
//     code is recorded.

func init() {
	AddRules(
		Rule{ID: "limits.properties.count", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.3"), traffic("E-properties-recorded")},
			Text:     "An entity with 252 custom properties (255 with PartitionKey, RowKey and Timestamp) MUST be accepted by every write, and one with 253 MUST be refused with 400 TooManyProperties and not stored.",
			Source:   SrcDataModel + "#property-limitations",
			Sections: []string{dmSecCapacity}},
		Rule{ID: "limits.properties.count-merged", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.3")},
			Text:     "A merge that would leave more than 252 custom properties on the stored entity MUST be refused with 400 (the code is recorded) and leave the entity unchanged; one that leaves exactly 252 MUST succeed.",
			Source:   SrcDataModel + "#property-limitations",
			Sections: []string{dmSecCapacity}},
		Rule{ID: "limits.property-name.length", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.3"), traffic("E-properties-recorded")},
			Text:   "A property name of 255 characters MUST be accepted by every write, and one of 256 MUST be refused with 400 PropertyNameTooLong and not stored.",
			Source: SrcDataModel + "#property-names"},
		Rule{ID: "limits.string.size", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.5"), traffic("E-string-32k-edge")},
			Text:   "An Edm.String of 32,000 UTF-16 code units (a character outside the Basic Multilingual Plane counts as two) MUST be accepted by every write, and one of more than 32 Ki units (64 KiB) MUST be refused with 400 PropertyValueTooLarge and not stored.",
			Source: SrcDataModel + "#property-types"},
		// EVIDENCE.md 13, E-string-32k-edge: a live test got 400 at exactly 32 Ki units.
		Rule{ID: "limits.string.size-edge", Level: May, Area: AreaLimits,
			Text:   "An Edm.String of exactly 32 Ki UTF-16 code units MAY be stored (the documented 64 KiB) or refused with 400 PropertyValueTooLarge (a live answer); the choice is recorded, a stored value MUST read back unchanged and a refused one MUST leave nothing stored.",
			Source: SrcLiveStringEdge},
		Rule{ID: "limits.binary.size", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.5"), doc("5.2")},
			Text:   "An Edm.Binary of 64 KiB MUST be accepted by every write, and one byte more MUST be refused with 400 PropertyValueTooLarge and not stored.",
			Source: SrcDataModel + "#property-types"},
		Rule{ID: "limits.key.size", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.2")},
			Text:     "A PartitionKey or RowKey of 512 characters MUST be accepted, and one of more than 1,024 characters MUST be refused with 400 (the code is recorded) and not stored.",
			Source:   SrcDataModel + "#partitionkey-property",
			Sections: []string{dmSecCapacity}},
		Rule{ID: "limits.key.size-between", Level: May, Area: AreaLimits,
			Text:   "A PartitionKey or RowKey of 513 to 1,024 characters MAY be accepted (1 KiB counted in characters) or refused with 400 (counted in UTF-16 bytes); an accepted key MUST read back unchanged (the choice is recorded).",
			Source: SrcDataModel + "#partitionkey-property"},
		Rule{ID: "limits.entity.size", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.4")},
			Text:     "An entity clearly under 1 MiB by the documented size accounting MUST be accepted by every write, and one clearly over MUST be refused with 400 EntityTooLarge and not stored.",
			Source:   SrcSizeBlog,
			Sections: []string{dmSecCapacity}},
		Rule{ID: "limits.entity.size-first", Level: Must, Area: AreaLimits, Evidence: []Fact{traffic("E-entity-size-first")},
			Text:   "An entity clearly over 1 MiB made of strings of 32,768 characters, each also over the value limit, MUST be refused with 400 EntityTooLarge: the entity's size is judged before its values' (E-entity-size-first).",
			Source: SrcEntityTooLargeLive},
		Rule{ID: "limits.entity.size-edge", Level: May, Area: AreaLimits,
			Text:   "An entity at exactly 1 MiB by the documented accounting, or a few bytes around it, MAY be accepted or refused; a refusal MUST be 400 EntityTooLarge and an accepted entity MUST read back unchanged (the outcome is recorded).",
			Source: SrcSizeBlog},
		Rule{ID: "limits.entity.size-merged", Level: Must, Area: AreaLimits, Evidence: []Fact{doc("1.4")},
			Text:     "A merge that would make the stored entity clearly larger than 1 MiB MUST be refused with 400 (the code is recorded) and leave the entity unchanged.",
			Source:   SrcSizeBlog,
			Sections: []string{dmSecCapacity}},
	)
}

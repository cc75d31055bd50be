package spec

// Rules of the eight EDM property types (EVIDENCE.md 1.5; the design guide's "About Azure Table
// storage" and "Encrypt table data").
//
// Each type's rule is checked on both paths a value comes back by: Get Entity and Query
// Entities. Decisions on UNCERTAIN facts:
//   - A DateTime before 1601-01-01: the refusal with 400 is a MUST (the documented range
//     starts there); the code (OutOfRangeInput reported by users) is recorded.
//   - Negative zero: whether the sign survives the service's number formatting is not
//     known; the rule is a MAY that requires a Double equal to zero and records the sign.

const typeRoundTrip = " MUST read back through Get Entity and Query Entities with the same type and exactly the same value"

func init() {
	AddRules(
		Rule{ID: "types.string.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:     "An Edm.String value (empty, any Unicode text including characters outside the Basic Multilingual Plane, text that looks like a number, date, GUID or Boolean)" + typeRoundTrip + ".",
			Source:   SrcDataModel + "#property-types",
			Sections: []string{dmSecAbout}},
		Rule{ID: "types.binary.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:     "An Edm.Binary value (empty, every byte value, up to 64 KiB)" + typeRoundTrip + ", so that client-side encrypted data can be stored.",
			Source:   SrcDataModel + "#property-types",
			Sections: []string{dmSecEncrypt}},
		Rule{ID: "types.boolean.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.Boolean value" + typeRoundTrip + ".",
			Source: SrcDataModel + "#property-types"},
		Rule{ID: "types.datetime.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.DateTime value from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, with up to seven fractional digits," + typeRoundTrip + ".",
			Source: SrcDateTimeFormat},
		Rule{ID: "types.datetime.before-1601", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.DateTime value before 1601-01-01T00:00:00Z MUST be refused with 400 (the code is recorded) and not stored.",
			Source: SrcDataModel + "#property-types"},
		Rule{ID: "types.double.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5"), traffic("E-double-exponent")},
			Text:   "An Edm.Double value (fractions, whole numbers such as 5.0, the extremes, subnormals, NaN, +Infinity and -Infinity)" + typeRoundTrip + "; a whole number MUST stay a Double.",
			Source: SrcPayloadFormat},
		Rule{ID: "types.double.negative-zero", Level: May, Area: AreaTypes,
			Text:   "An Edm.Double negative zero MUST read back as a Double equal to zero; whether its sign survives MAY differ (the choice is recorded).",
			Source: SrcPayloadFormat},
		Rule{ID: "types.guid.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.Guid value" + typeRoundTrip + ".",
			Source: SrcDataModel + "#property-types"},
		Rule{ID: "types.int32.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.Int32 value, including -2147483648 and 2147483647," + typeRoundTrip + ".",
			Source: SrcDataModel + "#property-types"},
		Rule{ID: "types.int64.round-trip", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:   "An Edm.Int64 value, including its extremes, 2^53+1 and values that would fit an Int32," + typeRoundTrip + ".",
			Source: SrcPayloadFormat},
		Rule{ID: "types.all-in-one", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("1.5")},
			Text:     "One entity MUST hold properties of all eight types at once, each read back with its own type and value.",
			Source:   SrcDataModel + "#property-types",
			Sections: []string{dmSecAbout}},
		Rule{ID: "types.type-change", Level: Must, Area: AreaTypes, Evidence: []Fact{doc("2.3")},
			Text:   "A write that sends an existing property with another type (Merge Entity or Update Entity) MUST store the new type, e.g. an Int32 becomes a String.",
			Source: SrcMergeEntity},
	)
}

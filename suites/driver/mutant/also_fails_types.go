package mutant

// What the faults of the type, value and limit mutants break besides their Breaks: rules
// whose own statement is about what the mutant changes. (A spec that merely reads such a
// value back is blocked by that type's round-trip rule instead: suites/matchers.)
var _ = declareAlsoFails(map[string]map[string]string{
	"int32-widened": {
		"types.all-in-one": "the entity of every type holds an Edm.Int32, which comes back as an Edm.Int64",
	},
	"booleans-as-int32": {
		"types.all-in-one": "the entity of every type holds an Edm.Boolean, which comes back as an Edm.Int32",
	},
	"datetime-milliseconds": {
		"types.all-in-one": "the entity of every type holds an Edm.DateTime with 100 ns ticks, which comes back cut to milliseconds",
	},
	"whole-double-as-int32": {
		"protocol.double.whole": "the whole Double the rule sends comes back as an Edm.Int32, not as a Double",
	},
	"schema-fixed-per-table": {
		"modify.merge.type-change":      "a property's type is fixed by its first value, so the merge stores the new value as a string of the old type's column",
		"modify.replace.type-change":    "a property's type is fixed by its first value, so the replace stores the new value as a string of the old type's column",
		"modify.insert-or-merge.merges": "a property Insert Or Merge sets with another type is stored as a string, not as the value sent",
	},
	"nulls-stored-as-empty-strings": {
		"modify.insert-or-replace.creates":  "the entity is created with the properties sent as null, as empty strings",
		"modify.insert-or-merge.creates":    "the entity is created with the properties sent as null, as empty strings",
		"modify.insert-or-replace.replaces": "a property sent as null is stored as an empty string instead of removed",
		"modify.insert-or-merge.merges":     "a property sent as null is overwritten with an empty string instead of kept",
		"batch.merge-replace":               "the merges, replaces and upserts of a transaction store a null as an empty string",
	},
	"typed-strings-refused": {
		"protocol.double.out-of-range": "a Double sent as a string is refused with InvalidValueType, not the InvalidInput the rule requires",
	},
	"missing-keys-defaulted": {
		"entities.key.required.code": "the insert without keys is stored under empty keys instead of refused with PropertiesNeedValue",
	},
	"oversize-truncated": {
		"limits.string.size-edge":                 "a String at the edge, when refused by the store, is stored cut short instead, so it does not read back unchanged",
		"limits.entity.size-edge":                 "an entity at the edge, when refused by the store, is stored without its largest property, so it does not read back unchanged",
		"limits.entity.size-first":                "the entity over 1 MiB is stored trimmed instead of refused with EntityTooLarge",
		"limits.entity.size-merged":               "the merge past 1 MiB is stored trimmed instead of refused, so the entity changes",
		"pattern.large-entities.entity-too-large": "the entity over 1 MiB is stored trimmed instead of refused",
		"pattern.large-entities.value-too-large":  "the Binary over 64 KiB is stored cut to the limit instead of refused",
	},
	"extra-properties-dropped": {
		"limits.properties.count-merged": "a merge past 252 properties is stored without the extra ones instead of refused",
		"pattern.wide-entities.too-many": "the entity of 365 properties is stored without the extra ones instead of refused",
	},
	"long-names-truncated": {
		"limits.key.size-between": "a key over 512 characters, refused by the store, is stored cut to 512, so it does not read back unchanged",
	},
})

package mutant

// What the faults of the type mutants break besides their Breaks: rules whose own statement
// is about the value the mutant changes (every other spec that merely reads such a value back
// is blocked by that type's round-trip rule instead).
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
})

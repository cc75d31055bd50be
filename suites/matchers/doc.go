// Package matchers holds Gomega matchers that speak the Table API: HaveFailedWith(409,
// "EntityAlreadyExists"), BeInKeyOrder(), MatchEntity(e). Their failure messages say what
// came back, what the rule expects, and the request id, and name transport errors as such.
//
// It imports gomega, reference/api, reference/spec, suites/driver and suites/driver/record:
// which properties and values the running spec wrote, so that an entity comparison judges
// only those, and the note (record.NotePrecondition, which the framework takes) that blocks
// a spec by a type's round-trip rule when a comparison differs only by values come back in
// another form of themselves, by the key case rule when it differs only by keys come back in
// another letter case (keys the spec never wrote, record.KeyMayHaveBeenWrittenByRunningSpec),
// or by modify.read-your-writes when a Get Entity read-back shows an older state than a
// query of the same key (fresh.go). Never Ginkgo or the framework.
package matchers

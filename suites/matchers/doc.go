// Package matchers holds Gomega matchers that speak the Table API: HaveFailedWith(409,
// "EntityAlreadyExists"), BeInKeyOrder(), MatchEntity(e). Their failure messages say what
// came back, what the rule expects, and the request id, and name transport errors as such.
//
// It imports gomega, reference/api, reference/spec, suites/driver and suites/driver/record
// (which properties the running spec wrote, so that an entity comparison judges only
// those).
package matchers

// Package bench holds conform's load benchmarks: declarative workloads (single operations,
// YCSB A–F, the design guide's patterns and anti-patterns), a measuring decorator around
// any api.Backend, and a runner that drives a workload for a number of operations (from
// testing.B) or for a duration (from `conform bench`).
//
// Every workload runs against any backend (the reference in process or over HTTP, Azurite,
// any endpoint by connection string) in its own table named with the framework's prefix
// ("cf" + a run id), deleted afterwards. Each run verifies a sample of its results, so a
// fast but wrong backend fails instead of winning.
//
// An operation is one request to the backend: figures (ops/s, entities/s, p50/p99/p99.9
// latency, errors, throttles) come from per-worker HdrHistograms kept by the decorator and
// merged at the end of a run. The decorator retries throttling answers as the Azure SDKs do
// (throttle.go) and counts them per kind, per second and per partition, never as errors.
//
// A run can be paced (Limit.Rate, a closed model) or open (Limit.Open: steps start at their
// time on idle or added workers, dropped at the cap); either way each request is recorded
// from its intended start too (intended.go, docs/BENCHMARKS.md), beside its service time.
// machine.go gives repeated runs their intervals and says how busy the machine was; the
// growth family (growth.go) loads one table in steps and measures four operations at each.
//
// A run can be one shard of many (shard.go): each shard runs every workload in tables of
// its own and writes its raw measures (raw.go: encoded HdrHistograms, counts, series); Merge
// (merge.go) adds a run's shards up into one report.
//
// It may import the standard library, hdrhistogram-go, aztables/azcore (the SDK ceiling),
// reference/api, reference/spec, reference/tableserver and fixtures. The benchmark
// functions (bench_test.go) also import suites/provision to open backends by name.
package bench

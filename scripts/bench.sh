#!/usr/bin/env bash
# Runs the default benchmark set (bench/) against each backend of a comma list, then the SDK
# ceiling once, saves every output under bench/results/<UTC time>/ and prints a benchstat
# comparison with one column per backend.
#
#   scripts/bench.sh reference,reference-http,azurite
#
# Environment: BENCHTIME (default 1s), BENCH_COUNT (runs of each benchmark, default 5:
# enough for benchstat to tell two columns apart; its 95% intervals need 6), BENCH
# (benchmark regexp, default .), BENCH_CEILING (0 skips the SDK ceiling), BENCH_ARGS (more
# flags for the benchmarks, e.g. "-large -workers=16"), GO.
set -euo pipefail
cd "$(dirname "$0")/.."

backends="${1:-${BENCH_BACKENDS:-reference,reference-http,azurite}}"
benchtime="${BENCHTIME:-1s}"
count="${BENCH_COUNT:-5}"
pattern="${BENCH:-.}"
ceiling="${BENCH_CEILING:-1}"
go="${GO:-go}"
# benchstat from golang.org/x/perf, pinned; the module proxy serves it.
benchstat_pkg="golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "== building the benchmarks into $out"
"$go" test -c -o "$out/bench.test" ./bench

run() { # run NAME ARGS...: one benchmark binary run, its output kept in $out/NAME.txt
  local name="$1"
  shift
  echo "== $name"
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  "$out/bench.test" -test.run '^$' -test.benchtime "$benchtime" -test.count "$count" -test.timeout 60m \
    "$@" ${BENCH_ARGS:-} | tee "$out/$name.txt"
}

status=0
IFS=',' read -ra list <<<"$backends"
files=()
for b in "${list[@]}"; do
  [ -n "$b" ] || continue
  name="${b%%=*}" # NAME of NAME=CONNECTION_STRING; the connection string is never saved
  if run "$name" -test.bench "$pattern" -ceiling=false -backend "$b"; then
    files+=("$out/$name.txt")
  else
    echo "bench.sh: the benchmarks failed on $name (output kept in $out/$name.txt)" >&2
    status=1
  fi
done
if [ "$ceiling" != 0 ]; then
  run sdk-ceiling -test.bench '^BenchmarkSDKCeiling$' || status=1
fi

if [ "${#files[@]}" -gt 0 ]; then
  cat "${files[@]}" >"$out/all.txt"
  echo
  echo "== benchstat: one column per backend (the first is the base of the comparisons)"
  "$go" run "$benchstat_pkg" -col /backend "$out/all.txt" | tee "$out/benchstat.txt" || status=1
fi
if [ "$ceiling" != 0 ] && [ -s "$out/sdk-ceiling.txt" ]; then
  echo
  echo "== benchstat: the SDK ceiling (same aztables client, 16 workers)"
  "$go" run "$benchstat_pkg" -col /backend "$out/sdk-ceiling.txt" | tee "$out/benchstat-ceiling.txt" || status=1
  grep '^SDK ceiling' "$out/sdk-ceiling.txt" || true
fi
rm -f "$out/bench.test"
echo "== results in $out"
exit $status

#!/usr/bin/env bash
# Runs the benchmark set (bench/) against each backend of a comma list, then the SDK ceiling,
# saves every output under bench/results/<UTC time>/ and prints, short: one table of
# throughput per backend, a comparison of the HTTP backends with each other (never with the
# in-process reference, whose requests cross no network), and the SDK ceiling's shares.
#
#   scripts/bench.sh reference,reference-http,azurite
#   scripts/bench.sh reference-http,acct=env:CONN   # an endpoint, its connection string in $CONN (printed nowhere)
#
# Environment:
#   BENCH_WORKLOADS  the workloads, as conform bench --workloads takes them; default
#                    "ops,ycsb-default,guide,growth": the single operations, YCSB A-F under YCSB's own
#                    distribution each, the design guide's cases (28 of 40), and the growth
#                    family at BENCH_GROWTH_SIZES. "all" runs the 40, YCSB under all three
#                    distributions (about half as long again), without growth.
#   BENCH_GROWTH_SIZES  the growth family's table sizes (default 1000,10000; the full family
#                    is 10000,100000,1000000, and 10000000 with enough memory)
#   BENCHTIME        time per run of a case (default 300ms)
#   BENCH_COUNT      runs of each case (default 6: benchstat's 95% intervals need 6)
#   BENCH            benchmark regexp (default .)
#   BENCH_CEILING    0 skips the SDK ceiling
#   BENCH_ARGS       more flags for the benchmarks, e.g. "-large -workers=16"
#   GO               the go command
# The full outputs (latencies, CPU per operation, p99 compared) stay in the results
# directory; the console gets a line per benchmark family, at least one every 30 s, and the
# tables.
set -euo pipefail
cd "$(dirname "$0")/.."

backends="${1:-${BENCH_BACKENDS:-reference,reference-http,azurite}}"
workloads="${BENCH_WORKLOADS:-ops,ycsb-default,guide,growth}"
growth_sizes="${BENCH_GROWTH_SIZES:-1000,10000}"
benchtime="${BENCHTIME:-300ms}"
count="${BENCH_COUNT:-6}"
pattern="${BENCH:-.}"
ceiling="${BENCH_CEILING:-1}"
go="${GO:-go}"
# benchstat from golang.org/x/perf, pinned; the module proxy serves it.
benchstat_pkg="golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }

out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "== building the benchmarks and benchstat into $out (load average $(load))"
"$go" test -c -o "$out/bench.test" ./bench
GOBIN="$(pwd)/$out" "$go" install "$benchstat_pkg"
benchstat="$out/benchstat"

# tables FILE ARGS...: benchstat ARGS, kept in FILE and printed without the lines naming the
# machine (goos, goarch, pkg, cpu), which the files keep.
tables() {
  local file="$1"
  shift
  "$benchstat" "$@" >"$file" || return 1
  grep -Ev '^(goos|goarch|pkg|cpu): ' "$file" || true
}

# progress NAME FILE: copies the benchmark output on standard input into FILE, printing the
# first result of each benchmark family, failures, and at least one line every 30 s (the
# case last done, or that the run goes on).
progress() {
  local name="$1" file="$2" line family last="" results=0 start=$SECONDS said=$SECONDS
  : >"$file"
  while true; do
    if IFS= read -r -t 30 line; then
      printf '%s\n' "$line" >>"$file"
      case "$line" in
      Benchmark*)
        results=$((results + 1))
        family="${line%%/*}"
        if [ "$family" != "$last" ]; then
          last="$family"
          echo "   $name: ${family#Benchmark} ($results results, $((SECONDS - start)) s)"
          said=$SECONDS
        elif [ $((SECONDS - said)) -ge 30 ]; then
          local at="${line%%[[:space:]]*}"
          at="${at#*/}"               # without Benchmark<Family>/
          [[ "$at" != backend=* ]] || at="${at#*/}" # and backend=NAME/
          echo "   $name: ${family#Benchmark}, ${at%-[0-9]*} done ($results results, $((SECONDS - start)) s)"
          said=$SECONDS
        fi
        ;;
      '--- FAIL'* | FAIL* | panic*) echo "   $name: $line" ;;
      esac
    elif [ $? -gt 128 ]; then
      echo "   $name: still running, $results results after $((SECONDS - start)) s"
      said=$SECONDS
    else
      break
    fi
  done
}

# growth_table: from benchmark output on standard input, the first BenchmarkGrowth line of each
# size as "entities=N  point-read-p99-µs X ...  bytes/entity Y".
growth_table() {
  awk '/^BenchmarkGrowth\// {
    split($1, parts, "/"); size = parts[3]; sub(/-[0-9]+$/, "", size)
    if (seen[size]++) next
    line = "   " size
    for (i = 3; i < NF; i += 2) if ($(i + 1) ~ /p99-µs$|bytes\/entity|load-s/) line = line "  " $(i + 1) " " $i
    print line
  }'
}

run() { # run NAME ARGS...: one benchmark binary run, its output kept in $out/NAME.txt
  local name="$1" t0=$SECONDS
  shift
  echo
  echo "== $name: -benchtime $benchtime -count $count"
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  (cd bench && "../$out/bench.test" -test.run '^$' -test.benchtime "$benchtime" -test.count "$count" -test.timeout 60m \
    "$@" ${BENCH_ARGS:-} 2>&1) | progress "$name" "$out/$name.txt"
  local status="${PIPESTATUS[0]}"
  echo "   $name: done in $((SECONDS - t0)) s (load average $(load))"
  return "$status"
}

status=0
IFS=',' read -ra list <<<"$backends"
files=()
remote=()
for b in "${list[@]}"; do
  [ -n "$b" ] || continue
  name="${b%%=*}" # NAME of NAME=CONNECTION_STRING; the connection string is never saved
  if run "$name" -test.bench "$pattern" -ceiling=false -workloads "$workloads" -growth-sizes "$growth_sizes" -backend "$b"; then
    files+=("$out/$name.txt")
    [ "$name" = reference ] || remote+=("$name")
    echo
    echo "== $name: throughput, ops/s (median ± 95% interval of $count runs; latencies and CPU in $out/$name.txt)"
    tables "$out/benchstat-$name.txt" -filter '.unit:ops/s' -ignore /backend,/gomaxprocs "$name=$out/$name.txt" || status=1
    if grep -q '^BenchmarkGrowth/' "$out/$name.txt"; then
      echo
      echo "== $name: cost as the data grows, p99 µs per operation (the first run of each size; all in $out/$name.txt)"
      growth_table <"$out/$name.txt"
    fi
  else
    echo "bench.sh: the benchmarks failed on $name (output kept in $out/$name.txt)" >&2
    status=1
  fi
done
if [ "${#files[@]}" -gt 0 ]; then
  cat "${files[@]}" >"$out/all.txt"
fi
if [ "${#remote[@]}" -gt 1 ]; then
  filter=""
  for n in "${remote[@]}"; do filter="${filter:+$filter OR }/backend:$n"; done
  echo
  echo "== the backends over HTTP compared, ops/s (the first, ${remote[0]}, is the base; p99 in $out/benchstat-compared-p99.txt)"
  tables "$out/benchstat-compared.txt" -col /backend -ignore /gomaxprocs -filter "($filter) .unit:ops/s" "$out/all.txt" || status=1
  "$benchstat" -col /backend -ignore /gomaxprocs -filter "($filter) .unit:p99-µs" "$out/all.txt" >"$out/benchstat-compared-p99.txt" || status=1
fi
if [ "$ceiling" != 0 ]; then
  if run sdk-ceiling -test.bench '^BenchmarkSDKCeiling$' -ceiling && [ -s "$out/sdk-ceiling.txt" ]; then
    echo
    echo "== the SDK ceiling: the reference server's throughput through aztables, as a share of a do-nothing server's (ref/noop)"
    grep '^SDK ceiling' "$out/sdk-ceiling.txt" || true
    echo "(benchstat writes a share of 0.912 as 912.0m; server CPU and allocations per request in $out/sdk-ceiling.txt)"
    : >"$out/benchstat-ceiling.txt"
    for unit in ref/noop ref-ops/s noop-ops/s; do # the share first, then what it divides
      [ "$unit" = ref/noop ] || echo >>"$out/benchstat-ceiling.txt"
      "$benchstat" -ignore /gomaxprocs -filter ".unit:$unit" "sdk-ceiling=$out/sdk-ceiling.txt" >>"$out/benchstat-ceiling.txt" || status=1
    done
    grep -Ev '^(goos|goarch|pkg|cpu): ' "$out/benchstat-ceiling.txt" || true
  else
    status=1
  fi
fi
rm -f "$out/bench.test" "$out/benchstat"
echo
echo "== results in $out; load average $(load)"
exit $status

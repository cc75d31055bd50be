#!/usr/bin/env bash
# Runs the benchmark set (bench/) against each backend of a comma list, then the SDK ceiling,
# saves every output under bench/results/<UTC time>/ and prints, short: one table of
# throughput per backend, a comparison of the HTTP backends with each other (never with the
# in-process reference, whose requests cross no network), and the SDK ceiling's shares.
#
#   scripts/bench.sh reference,reference-http,azurite
#
# Environment: BENCHTIME (default 300ms), BENCH_COUNT (runs of each benchmark, default 6:
# benchstat's 95% intervals need 6), BENCH (benchmark regexp, default .), BENCH_CEILING (0
# skips the SDK ceiling), BENCH_ARGS (more flags for the benchmarks, e.g. "-large
# -workers=16"), GO. The full outputs stay in the results directory; the console gets a line
# per benchmark family and one every 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."

backends="${1:-${BENCH_BACKENDS:-reference,reference-http,azurite}}"
benchtime="${BENCHTIME:-300ms}"
count="${BENCH_COUNT:-6}"
pattern="${BENCH:-.}"
ceiling="${BENCH_CEILING:-1}"
go="${GO:-go}"
# benchstat from golang.org/x/perf, pinned; the module proxy serves it.
benchstat_pkg="golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "== building the benchmarks and benchstat into $out"
"$go" test -c -o "$out/bench.test" ./bench
GOBIN="$(pwd)/$out" "$go" install "$benchstat_pkg"
benchstat="$out/benchstat"

# progress NAME FILE: copies the benchmark output on standard input into FILE, printing the
# first result of each benchmark family, failures, and a line every 30 s.
progress() {
  local name="$1" file="$2" line family last="" results=0 start=$SECONDS
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
        fi
        ;;
      '--- FAIL'* | FAIL* | panic*) echo "   $name: $line" ;;
      esac
    elif [ $? -gt 128 ]; then
      echo "   $name: still running, $results results after $((SECONDS - start)) s"
    else
      break
    fi
  done
}

run() { # run NAME ARGS...: one benchmark binary run, its output kept in $out/NAME.txt
  local name="$1"
  shift
  echo "== $name: -benchtime $benchtime -count $count"
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  (cd bench && "../$out/bench.test" -test.run '^$' -test.benchtime "$benchtime" -test.count "$count" -test.timeout 60m \
    "$@" ${BENCH_ARGS:-} 2>&1) | progress "$name" "$out/$name.txt"
  return "${PIPESTATUS[0]}"
}

status=0
IFS=',' read -ra list <<<"$backends"
files=()
remote=()
for b in "${list[@]}"; do
  [ -n "$b" ] || continue
  name="${b%%=*}" # NAME of NAME=CONNECTION_STRING; the connection string is never saved
  if run "$name" -test.bench "$pattern" -ceiling=false -backend "$b"; then
    files+=("$out/$name.txt")
    [ "$name" = reference ] || remote+=("$name")
    echo
    echo "== $name: throughput (ops/s; latencies and CPU in $out/$name.txt)"
    "$benchstat" -filter '.unit:ops/s' "$name=$out/$name.txt" | tee "$out/benchstat-$name.txt" || status=1
  else
    echo "bench.sh: the benchmarks failed on $name (output kept in $out/$name.txt)" >&2
    status=1
  fi
done
if [ "$ceiling" != 0 ]; then
  run sdk-ceiling -test.bench '^BenchmarkSDKCeiling$' -ceiling || status=1
fi

if [ "${#files[@]}" -gt 0 ]; then
  cat "${files[@]}" >"$out/all.txt"
fi
if [ "${#remote[@]}" -gt 1 ]; then
  filter=""
  for n in "${remote[@]}"; do filter="${filter:+$filter OR }/backend:$n"; done
  echo
  echo "== the backends over HTTP compared (the first, ${remote[0]}, is the base): throughput and p99"
  "$benchstat" -col /backend -filter "($filter) (.unit:ops/s OR .unit:p99-µs)" "$out/all.txt" | tee "$out/benchstat-compared.txt" || status=1
fi
if [ "$ceiling" != 0 ] && [ -s "$out/sdk-ceiling.txt" ]; then
  echo
  grep '^SDK ceiling' "$out/sdk-ceiling.txt" || true
  "$benchstat" -filter '.unit:(ref/noop OR ref-ops/s OR noop-ops/s)' "sdk-ceiling=$out/sdk-ceiling.txt" | tee "$out/benchstat-ceiling.txt" || status=1
fi
rm -f "$out/bench.test" "$out/benchstat"
echo "== results in $out"
exit $status

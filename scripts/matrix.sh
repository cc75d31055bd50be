#!/usr/bin/env bash
# The compatibility matrix: one conform run against the reference, reference-cosmos (judged
# under the cosmos profile, which follows it) and a span of Azurite 3.x versions installed
# from npm into conform's cache (azurite@VERSION), the backends run two at a time
# (--parallel-backends); then each backend's run is published on its own
# (conform report --publish) and conform matrix compares them in MATRIX_OUT/matrix.html,
# matrix.md and matrix.json.
#
#   scripts/matrix.sh     # make matrix; needs bin/conform (make build), Node.js 20+ and npm
#
# Settings (environment): CONFORM (the binary, default bin/conform); MATRIX_AZURITE_VERSIONS
# (space-separated); MATRIX_OUT (default conform-matrix); MATRIX_PARALLEL_BACKENDS (default
# 2); MATRIX_LABEL_FILTER (a Ginkgo label filter, default the whole catalogue);
# MATRIX_EXTRA_BACKENDS (more --backend arguments, space-separated, e.g.
# "mine=image:REF,port=P" or "mine=exec:COMMAND" without spaces in them).
# A run that exits 1 (an implementation does not conform) is what a matrix expects; a backend
# that could not be started is left out of the matrix with one line. The exit status is
# conform matrix's.
set -uo pipefail
cd "$(dirname "$0")/.."
conform="${CONFORM:-./bin/conform}"
# The 3.x line serves tables from 3.12.0 on (a preview then); 3.35.0 is the pinned version and
# the newest that supports Node.js 20.
versions="${MATRIX_AZURITE_VERSIONS:-3.14.0 3.17.1 3.19.0 3.21.0 3.23.0 3.25.1 3.28.0 3.30.0 3.32.0 3.34.0 3.35.0}"
out="${MATRIX_OUT:-conform-matrix}"
[ -x "$conform" ] || { echo "matrix: $conform is missing (make build)" >&2; exit 2; }

backends=(reference reference-cosmos)
for v in $versions; do backends+=("azurite@$v"); done
for b in ${MATRIX_EXTRA_BACKENDS:-}; do backends+=("$b"); done
args=()
for b in "${backends[@]}"; do args+=(--backend "$b"); done
[ -n "${MATRIX_LABEL_FILTER:-}" ] && args+=(--label-filter "$MATRIX_LABEL_FILTER")

rm -rf "$out/run" "$out/runs"
mkdir -p "$out/runs"
start=$(date +%s)
echo "matrix: running ${#backends[@]} backends, ${MATRIX_PARALLEL_BACKENDS:-2} at a time: ${backends[*]}"
"$conform" run "${args[@]}" --parallel-backends "${MATRIX_PARALLEL_BACKENDS:-2}" --out "$out/run"
status=$?
echo "matrix: conform run exited $status after $(($(date +%s) - start)) s"
if [ ! -f "$out/run/report.json" ]; then
  echo "matrix: the run wrote no report.json; nothing to compare" >&2
  exit 2
fi

published=()
for b in "${backends[@]}"; do
  name="${b%%=*}"
  dir="$out/runs/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._@-' '_')"
  mkdir -p "$dir"
  cp "$out/run/report.json" "$dir/report.json"
  if msg="$("$conform" report --publish "$dir" --backend "$name" 2>&1)"; then
    published+=("$dir")
  else
    echo "matrix: $name left out: $msg"
    rm -rf "$dir"
  fi
done
[ ${#published[@]} -gt 0 ] || { echo "matrix: no backend could be published" >&2; exit 2; }
"$conform" matrix "${published[@]}" --out "$out"
status=$?
echo "matrix: done in $(($(date +%s) - start)) s; open $out/matrix.html"
exit $status

#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 10s).
# A crash the fuzzer finds is written by Go under the package's testdata/fuzz/<Target>/,
# where `go test` replays it from then on: commit it as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-10s}"
status=0
while IFS= read -r line; do
  file="${line%%:*}"
  target="$(sed -E 's/^.*func (Fuzz[A-Za-z0-9_]*).*$/\1/' <<<"$line")"
  pkg="./$(dirname "$file")"
  echo "== $pkg $target ($fuzztime)"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
    status=1
  fi
done < <(git ls-files '*_test.go' | xargs grep -H '^func Fuzz' | sort)
exit $status

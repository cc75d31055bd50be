#!/usr/bin/env bash
# Checks that `go install github.com/tableconform/conform/cmd/conform@VERSION` works for
# someone outside the repository, offline: the committed HEAD is served as VERSION by a
# file-based module proxy (module zip, .mod, .info), dependencies come from this machine's
# module cache (also in proxy layout), and the install runs in a scratch module with an
# empty module cache of its own, GOFLAGS=-mod=mod and no network. The installed binary
# must then print VERSION.
#
#   scripts/install-check.sh [VERSION]     # default v0.1.0; uncommitted changes are not served
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-v0.1.0}"
module="$(go list -m)"
go="${GO:-go}"
shared_cache="$("$go" env GOMODCACHE)/cache/download"

work="$(mktemp -d)"
cleanup() {
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The module as the proxy protocol serves it (go help goproxy).
at="$work/proxy/$module/@v"
mkdir -p "$at"
echo "$version" >"$at/list"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(git log -1 --format=%cI HEAD)" >"$at/$version.info"
git show HEAD:go.mod >"$at/$version.mod"
# As the go command does, the zip leaves out nested modules (a folder with a go.mod of its
# own, such as a test fixture module): a module zip that holds one cannot be unpacked.
excludes=()
while IFS= read -r nested; do
  excludes+=(":(exclude)$(dirname "$nested")")
done < <(git ls-files '*/go.mod')
git archive --format=zip --prefix="$module@$version/" -o "$at/$version.zip" HEAD -- . "${excludes[@]}"

mkdir -p "$work/scratch" "$work/bin"
cd "$work/scratch"
# -trimpath and CGO_ENABLED=0, as `make build`, let the build cache serve packages compiled
# before: without them every package is compiled again from the new module cache's paths.
# Neither changes how the module and its dependencies are resolved, which is what is checked.
export GOPROXY="file://$work/proxy,file://$shared_cache" GOMODCACHE="$work/modcache" \
  GOFLAGS="-mod=mod -trimpath" CGO_ENABLED=0 GOSUMDB=off GOTOOLCHAIN=local GOBIN="$work/bin" \
  GONOSUMDB= GOPRIVATE= GONOPROXY=
"$go" mod init example.com/scratch >/dev/null 2>&1
"$go" install "$module/cmd/conform@$version"
out="$("$work/bin/conform" version)"
echo "$out"
if ! grep -qx "conform $version" <<<"$out"; then
  echo "install-check: the installed conform does not report $version" >&2
  exit 1
fi
echo "install-check: go install $module/cmd/conform@$version works from a scratch module, offline"

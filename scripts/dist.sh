#!/usr/bin/env bash
# Release archives: conform built for linux, darwin and windows on amd64 and arm64 (static,
# CGO_ENABLED=0), each with the README, as dist/conform_<version>_<os>_<arch>.tar.gz (.zip
# for windows), and dist/SHA256SUMS over them. dist/ is not committed.
#
# Environment: VERSION (default: git describe), LDFLAGS (default: stamps VERSION and the
# commit), TARGETS (default: the six os/arch pairs), GO.
set -euo pipefail
cd "$(dirname "$0")/.."
go="${GO:-go}"
version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}"
buildinfo=github.com/tableconform/conform/internal/buildinfo
ldflags="${LDFLAGS:--s -w -X $buildinfo.version=$version -X $buildinfo.commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"

rm -rf dist
mkdir -p dist/stage
for target in $targets; do
  os="${target%/*}"
  arch="${target#*/}"
  name="conform_${version}_${os}_${arch}"
  exe=conform
  [ "$os" = windows ] && exe=conform.exe
  echo "dist: $name"
  mkdir -p "dist/stage/$name"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" "$go" build -trimpath -ldflags "$ldflags" -o "dist/stage/$name/$exe" ./cmd/conform
  cp README.md "dist/stage/$name/"
  if [ "$os" = windows ]; then
    (cd dist/stage && zip -qr "../$name.zip" "$name")
  else
    tar -C dist/stage -czf "dist/$name.tar.gz" "$name"
  fi
done
rm -rf dist/stage
(cd dist && sha256sum conform_* >SHA256SUMS)
echo "dist: $(ls dist | grep -vc SHA256SUMS) archives and dist/SHA256SUMS"
cat dist/SHA256SUMS

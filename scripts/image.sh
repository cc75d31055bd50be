#!/usr/bin/env bash
# Builds the container image of Dockerfile from bin/conform (make build): a context holding
# the binary, the machine's CA certificates (for https endpoints), a minimal /etc/passwd and
# a writable /tmp.
#
#   scripts/image.sh [IMAGE]        # default conform:local
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-conform:local}"
[ -x bin/conform ] || { echo "image: bin/conform is missing (make build)" >&2; exit 1; }
if ! go version -m bin/conform | grep -q 'CGO_ENABLED=0'; then
  echo "image: bin/conform is not static (build it with CGO_ENABLED=0)" >&2
  exit 1
fi
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp"
chmod 1777 "$ctx/rootfs/tmp"
cp bin/conform "$ctx/rootfs/conform"
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
  if [ -f "$ca" ]; then
    cp "$ca" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
    break
  fi
done
[ -f "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt" ] || echo "image: no CA certificates found here; https endpoints will not verify"
printf 'root:x:0:0:root:/:/conform\nconform:x:65532:65532:conform:/tmp:/conform\n' >"$ctx/rootfs/etc/passwd"
cp Dockerfile "$ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
echo "image: built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}'))"

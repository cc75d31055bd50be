#!/usr/bin/env bash
# Runs the image against an endpoint as a user would: `conform serve` (the reference over
# HTTP) on the host's loopback, and `conform run --backend me=env:CONN` in the container on
# the host's network, the connection string passed in the environment. Exit status is the
# container's, that is conform run's (0: conforms to its baseline, 1: does not, 2: cannot run).
# Then the other way round: conform on the host starts the image as a backend
# (NAME=image:REF,args=serve ...) through testcontainers-go, and the exit status is the worse
# of the two runs'.
#
#   scripts/image-test.sh [IMAGE]       # default conform:local; needs bin/conform and docker
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-conform:local}"
work="$(mktemp -d)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

./bin/conform serve --addr 127.0.0.1:0 >"$work/serve.out" 2>&1 &
serve_pid=$!
conn=""
for _ in $(seq 1 100); do
  conn="$(grep -m1 '^DefaultEndpointsProtocol=' "$work/serve.out" || true)"
  [ -n "$conn" ] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$conn" ]; then
  echo "image-test: conform serve did not start:" >&2
  cat "$work/serve.out" >&2
  exit 2
fi
echo "image-test: $(head -n1 "$work/serve.out")"
start=$(date +%s)
set +e
CONN="$conn" timeout --foreground 1200 docker run --rm --network host -e CONN "$image" \
  run --backend me=env:CONN --out conform-report
code=$?
set -e
echo "image-test: conform run in $image exited $code after $(($(date +%s) - start)) s"

# The image as a backend conform starts (the image: form); its log goes to raw/own.server.log.
export TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}"
export TESTCONTAINERS_RYUK_DISABLED="${TESTCONTAINERS_RYUK_DISABLED:-true}"
start=$(date +%s)
set +e
timeout --foreground 1200 ./bin/conform run --backend "own=image:$image,args=serve --addr 0.0.0.0:10002" --out conform-report-image
image_code=$?
set -e
echo "image-test: conform run --backend own=image:$image exited $image_code after $(($(date +%s) - start)) s"
[ "$image_code" -gt "$code" ] && code=$image_code
exit $code

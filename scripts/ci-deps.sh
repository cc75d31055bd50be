#!/usr/bin/env bash
# Installs the Debian packages CI needs beyond Go, Node.js and npm, in one place:
#   docker.io       the Docker engine for the azurite-docker backend (testcontainers-go)
#   busybox-static  sh, cat, awk and grep inside the local Azurite image (scripts/azurite-image.sh)
#   chromium        the browser test of report.html
#   curl            the protocol check of `conform serve`
# Only what is missing is installed; apt-get runs once, non-interactively and under
# `timeout --foreground`, so it neither waits on input nor hangs. Needs root and apt-get;
# elsewhere it says what it would install and exits 0. Another apt-get holding the lock is
# waited for (up to 5 minutes). Exit 1 when an install failed.
set -u
packages=(docker.io busybox-static chromium curl)
binary_of() {
  case "$1" in
    docker.io) echo dockerd ;;
    busybox-static) echo busybox ;;
    *) echo "$1" ;;
  esac
}
missing=()
for p in "${packages[@]}"; do
  command -v "$(binary_of "$p")" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "ci-deps: ${packages[*]} already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ci-deps: missing ${missing[*]} and no root apt-get here to install them; install them by hand"
  exit 0
fi
echo "ci-deps: installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! timeout --foreground 600 apt-get -o DPkg::Lock::Timeout=300 update -qq </dev/null >"$log" 2>&1; then
  echo "ci-deps: apt-get update failed:"
  tail -n 5 "$log"
  exit 1
fi
if ! timeout --foreground 900 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" </dev/null >"$log" 2>&1; then
  echo "ci-deps: apt-get install ${missing[*]} failed:"
  tail -n 5 "$log"
  exit 1
fi
echo "ci-deps: installed ${missing[*]}"

#!/usr/bin/env bash
# Installs Debian's nginx for the proxy test of cmd/conform (the suite through nginx in
# front of the reference server) when it is missing and this machine can install packages
# (root with apt-get). Best effort: without it the test says, in one line, that it skips
# its nginx part.
set -u
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-nginx: no nginx and no way to install it here; the proxy test will skip its nginx part"
  exit 0
fi
echo "ensure-nginx: installing Debian's nginx for the proxy test"
export DEBIAN_FRONTEND=noninteractive
if ! timeout --foreground 600 apt-get update -qq >/dev/null 2>&1 || \
   ! { timeout --foreground 900 apt-get install -y -qq --no-install-recommends nginx-light >/dev/null 2>&1 || \
       timeout --foreground 900 apt-get install -y -qq --no-install-recommends nginx >/dev/null 2>&1; }; then
  echo "ensure-nginx: the install failed; the proxy test will skip its nginx part"
fi
exit 0

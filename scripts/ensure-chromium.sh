#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test of report.html when it is missing and
# this machine can install packages (root with apt-get). Best effort: without it the test
# says it is skipped, and nothing else depends on it.
set -u
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no Chromium and no way to install it here; the browser test of report.html will be skipped"
  exit 0
fi
echo "ensure-chromium: installing Debian's chromium for the browser test of report.html"
if ! timeout 600 apt-get update -qq >/dev/null 2>&1 || \
   ! DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
  echo "ensure-chromium: the install failed; the browser test of report.html will be skipped"
fi
exit 0

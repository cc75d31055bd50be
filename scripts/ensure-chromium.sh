#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test of report.html when it is missing and this
# machine can install packages (root with apt-get); `make browser` runs it, `make test`
# does not. apt-get runs non-interactively under `timeout --foreground` (so a terminal does
# not stop it), and the result is reported as it is: exit 0 when Chromium is there
# afterwards, 1 when the install failed (the browser test then skips), 0 with a message
# where nothing can be installed.
set -u
have_chromium() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
if have_chromium; then
  echo "ensure-chromium: Chromium is installed"
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no Chromium and no root apt-get here; install Chromium by hand, or the browser test of report.html is skipped"
  exit 0
fi
echo "ensure-chromium: installing Debian's chromium with apt-get (a few minutes)"
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! timeout --foreground 600 apt-get -o DPkg::Lock::Timeout=300 update -qq </dev/null >"$log" 2>&1; then
  echo "ensure-chromium: apt-get update failed; the browser test of report.html will be skipped:"
  tail -n 5 "$log"
  exit 1
fi
if ! timeout --foreground 900 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium </dev/null >"$log" 2>&1; then
  echo "ensure-chromium: apt-get install chromium failed; the browser test of report.html will be skipped:"
  tail -n 5 "$log"
  exit 1
fi
if ! have_chromium; then
  echo "ensure-chromium: apt-get finished but no chromium command is on PATH"
  exit 1
fi
echo "ensure-chromium: installed $(chromium --version 2>/dev/null || echo chromium)"

#!/bin/sh
# heartbeat.sh WHAT COMMAND...: runs COMMAND with its output passed through and says
# "... 40s: still WHAT" on standard error whenever HEARTBEAT_EVERY seconds (20) pass, until
# it ends; exits with COMMAND's status. The Makefile runs through it what comes before the progress filter
# (internal/testprogress) exists: compiling that filter, which on a fresh clone waits on the
# standard library's compilation.
what="$1"
shift
every="${HEARTBEAT_EVERY:-20}"
started=$(date +%s)
(
  last=$started
  while sleep 1; do
    now=$(date +%s)
    if [ $((now - last)) -ge "$every" ]; then
      last=$now
      echo "... $((now - started))s: still $what" >&2
    fi
  done
) &
beat=$!
"$@"
status=$?
kill "$beat" 2>/dev/null
wait "$beat" 2>/dev/null
exit $status

#!/usr/bin/env bash
# Starts a Docker engine kept on loopback, for the azurite-docker backend, unless one
# already answers:
#
#   scripts/dockerd.sh start   # prints the engine's PID file when it started one
#   scripts/dockerd.sh stop    # stops the engine this script started (by its PID), if any
#
# The flags are mandatory on machines shared with others: --iptables=false and
# --ip-forward=false leave the host's firewall and forwarding alone (containers reach nothing
# outside), and --ip=127.0.0.1 binds every published port to loopback. Exit 0 when an engine
# answers, 1 when none could be started (the caller skips azurite-docker).
set -u
state="${DOCKERD_STATE:-${TMPDIR:-/tmp}/conform-dockerd}"
pidfile="$state/dockerd.pid"
log="$state/dockerd.log"

answers() { timeout --foreground 5 docker version >/dev/null 2>&1; }

case "${1:-}" in
start)
  if answers; then
    echo "dockerd: an engine already answers; using it"
    exit 0
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "dockerd: not installed (Debian: apt-get install docker.io)"
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "dockerd: starting an engine needs root"
    exit 1
  fi
  mkdir -p "$state"
  dockerd --iptables=false --ip-forward=false --ip=127.0.0.1 </dev/null >"$log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 60); do
    if answers; then
      echo "dockerd: started (PID $(cat "$pidfile"), log $log)"
      exit 0
    fi
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      break
    fi
    sleep 0.5
  done
  if kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "dockerd: the engine did not answer within 30 s; last lines of $log:"
  else
    echo "dockerd: the engine exited without answering; last lines of $log:"
  fi
  tail -n 5 "$log"
  "$0" stop >/dev/null
  exit 1
  ;;
stop)
  [ -f "$pidfile" ] || exit 0
  pid="$(cat "$pidfile")"
  rm -f "$pidfile"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    echo "dockerd: stopped (PID $pid)"
  fi
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac

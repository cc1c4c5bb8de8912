#!/usr/bin/env bash
# Stops the docker-registry that registry-up.sh started for DIR. Idempotent.
# Usage: registry-down.sh DIR [--purge]      (--purge also removes DIR and the pushed images)
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIR [--purge]" >&2; exit 2; }
dir=$1
[ -d "$dir" ] || exit 0
if [ -f "$dir/registry.pid" ]; then
  pid=$(cat "$dir/registry.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$dir/registry.pid"
fi
[ "${2:-}" = --purge ] && rm -rf "$dir"
exit 0

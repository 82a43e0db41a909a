#!/usr/bin/env bash
# Installs the Node packages from the lock file when they are missing or older than it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
marker="$root/node_modules/.package-lock.json"
if [ ! -f "$marker" ] || [ "$root/package-lock.json" -nt "$marker" ]; then
  echo "mooring: installing Node packages (npm ci)"
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error)
fi

#!/usr/bin/env bash
# Fails early, with what to install, when a tool the demo or the tests need is missing.
set -euo pipefail
missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)"); }
need node "Node.js 20.19 or newer"
need npm "comes with Node.js"
need go "Go 1.26 or newer, to build kube-apiserver and etcd"
need git "Debian package git"
need openssl "Debian package openssl"
if [ ${#missing[@]} -gt 0 ]; then
  echo "mooring: missing prerequisites:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`mooring: Node.js >= 20.19 is needed, found ${process.version}`); process.exit(1) }'

#!/usr/bin/env bash
# Fails early, with what to install, when a tool the demo or the tests need is missing.
# `check-prerequisites.sh tests` also wants the servers the test suite runs on loopback (sshd,
# docker-registry, htpasswd, age), runc to run the operator image, apt-get and dpkg-deb to
# build it (hack/image), chromium for the web UI's browser tests and prometheus (with promtool)
# for the monitoring pack's, and, as root on Debian, installs the packages itself.
set -euo pipefail
missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)"); }
need node "Node.js 20.19 or newer"
need npm "comes with Node.js"
need go "Go 1.26 or newer, to build kube-apiserver and etcd"
need git "Debian package git"
need openssl "Debian package openssl"
if [ "${1:-}" = tests ]; then
  need apt-get "Debian's apt: the operator image's packages are downloaded with it (hack/image)"
  need dpkg-deb "Debian's dpkg: unpacks the operator image's packages"
  declare -A debs=([/usr/sbin/sshd]=openssh-server [ssh]=openssh-client [docker-registry]=docker-registry [htpasswd]=apache2-utils [age]=age [runc]=runc [chromium]=chromium [prometheus]=prometheus)
  absent=()
  for tool in "${!debs[@]}"; do command -v "$tool" >/dev/null 2>&1 || [ -x "$tool" ] || absent+=("${debs[$tool]}"); done
  if [ ${#absent[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "mooring: installing the test servers' Debian packages: ${absent[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${absent[@]}" >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${absent[@]}" >/dev/null; }
  else
    for p in "${absent[@]}"; do missing+=("Debian package $p (the tests start it on loopback, or run the image with it)"); done
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "mooring: missing prerequisites:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`mooring: Node.js >= 20.19 is needed, found ${process.version}`); process.exit(1) }'

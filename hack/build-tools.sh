#!/usr/bin/env bash
# Builds the test peers that come from Go modules without replaces: bin/kustomize (the reference
# the kustomize conformance fixtures are generated with) and bin/sops (for SOPS fixtures).
# Each is pinned by a wrapper module under hack/tools/<name>/ (go.mod + go.sum, `tool` directive).
# A stamp in bin/.<name>.stamp records what a binary was built from; a matching stamp skips the
# build. Usage: hack/build-tools.sh [kustomize] [sops] [helm]   (default: kustomize and sops)
# `helm` is hack/lib/build-helm.sh: the Helm renderer (bin/mooring-helm.wasm) and bin/helm.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
export GOTOOLCHAIN=local   # a too-new module must fail here, not fetch another toolchain
export CGO_ENABLED=0
export GOFLAGS=-buildvcs=false
mkdir -p "$bin"

die() { echo "build-tools: $*" >&2; exit 1; }

command -v go >/dev/null || die "Go is not installed; Go >= 1.26 is needed to build kustomize and sops"
go_version=$(go env GOVERSION)
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) die "Go >= 1.26 is needed, found $go_version" ;;
esac

# tool_package DIR: the package a wrapper's `tool` directive names.
tool_package() { awk '$1 == "tool" && $2 != "(" { print $2; exit }' "$1/go.mod"; }

# module_version DIR MODULE: the version a wrapper's go.mod requires.
module_version() { awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$1/go.mod"; }

# build NAME MODULE: go build the wrapper's tool into bin/NAME unless its stamp matches.
build() {
  local name=$1 module=$2 dir="$root/hack/tools/$1"
  local pkg version stamp stamp_file="$bin/.$1.stamp"
  pkg=$(tool_package "$dir")
  version=$(module_version "$dir" "$module")
  [ -n "$pkg" ] && [ -n "$version" ] || die "hack/tools/$name/go.mod names no tool or no $module version"
  stamp=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "$go_version") | sha256sum | cut -c1-16)
  if [ -x "$bin/$name" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    echo "build-tools: $name $version is up to date"
    return
  fi
  echo "build-tools: building $name $version (a cold build takes a few minutes on 2 cores; a cached one seconds)"
  local start=$SECONDS
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$bin/$name" "$pkg") || die "go build of $name $version failed (see above)"
  [ -x "$bin/$name" ] || die "go build of $name produced no bin/$name"
  echo "$stamp" > "$stamp_file"
  echo "build-tools: $name $version built in $((SECONDS - start))s"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(kustomize sops)
for tool in "${wanted[@]}"; do
  case "$tool" in
    kustomize) build kustomize sigs.k8s.io/kustomize/kustomize/v5 ;;
    sops) build sops github.com/getsops/sops/v3 ;;
    helm) bash "$root/hack/lib/build-helm.sh" ;;
    *) die "unknown tool $tool (known: kustomize, sops, helm)" ;;
  esac
done

#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller, the reference peers that
# `npm run bench -- flux-side-by-side` runs next to Mooring, from the Go module proxy into bin/flux/,
# with the CRDs they serve (bin/flux/crds/). Cached: a stamp of this script, the versions and the Go
# version skips the build when nothing changed.
#
# `go install module@version` refuses both modules: their go.mod replaces their own `api` module by
# `./api`, a nested module the module zip does not carry. So the module is copied out of the module
# cache, that one replace dropped (the published api module of the same version is required
# already), and built there.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/bin/flux"
# The newest v1.9.x of each whose whole dependency graph the module proxy serves (Flux 2.9):
# source-controller v1.9.4 to v1.9.6 need github.com/fluxcd/pkg/artifact v0.18.2 or v0.18.3, which it refuses.
SOURCE_CONTROLLER_VERSION=v1.9.3
KUSTOMIZE_CONTROLLER_VERSION=v1.9.6
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

die() { echo "build-flux: $*" >&2; exit 1; }
command -v go >/dev/null || die "Go is not installed; Go >= 1.26 is needed to build Flux's controllers"

stamp=$( (cat "$0"; go env GOVERSION) | sha256sum | cut -c1-16)
if [ -x "$out/source-controller" ] && [ -x "$out/kustomize-controller" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "build-flux: source-controller $SOURCE_CONTROLLER_VERSION and kustomize-controller $KUSTOMIZE_CONTROLLER_VERSION are up to date"
  exit 0
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$out/crds"

# build NAME VERSION: fetch NAME@VERSION, drop its ./api replace, build bin/flux/NAME, keep its CRDs
# (a controller refuses to start unless every kind it watches is served).
build() {
  local name=$1 version=$2 module="github.com/fluxcd/$1" dir
  echo "build-flux: building $name $version (a cold build takes several minutes on 2 cores)"
  local start=$SECONDS
  dir=$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || die "go mod download $module@$version gave no directory"
  cp -r "$dir" "$work/$name"
  chmod -R u+w "$work/$name"
  sed -i "\#^replace $module/api => ./api\$#d" "$work/$name/go.mod"
  grep -q "=> ./api" "$work/$name/go.mod" && die "$name's go.mod still replaces ./api"
  (cd "$work/$name" && go build -trimpath -ldflags "-s -w" -o "$out/$name" .) || die "go build of $name $version failed"
  cp "$work/$name"/config/crd/bases/*.yaml "$out/crds/"
  echo "build-flux: $name $version built in $((SECONDS - start))s"
}

build source-controller "$SOURCE_CONTROLLER_VERSION"
build kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION"
echo "$stamp" > "$out/.stamp"

#!/usr/bin/env bash
# Builds the Helm renderer and the reference helm from hack/tools/helm-renderer (one wrapper
# module, so both use the helm.sh/helm/v3 version and dependency graph its go.sum pins):
#   bin/mooring-helm.wasm  hack/tools/helm-renderer/*.go for GOOS=wasip1, -buildmode=c-shared
#                          (a reactor: initialised once, one exported call per render): what
#                          shared/helm runs inside Node's WASI (shipped in the operator image, see
#                          hack/lib/image/build.ts)
#   bin/helm               helm.sh/helm/v3/cmd/helm: the oracle the renderer's tests compare with
# Both carry Helm's release ldflags (helm's Makefile at the pinned tag), so .Capabilities is
# what a released helm reports offline: KubeVersion v1.<client-go minor + 0>.0, not the v1.20.0 a
# plain `go build` leaves in, and HelmVersion with the release's version and commit.
# A stamp per binary records the module (and for the renderer its Go files), the Go version, the target, the build mode and
# the ldflags; a matching stamp skips the build.
# Usage: hack/lib/build-helm.sh [renderer] [helm]   (default: both)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/bin"
dir="$root/hack/tools/helm-renderer"
export GOTOOLCHAIN=local   # a too-new module must fail here, not fetch another toolchain
export CGO_ENABLED=0
export GOFLAGS=-buildvcs=false
mkdir -p "$bin"

die() { echo "helm build: $*" >&2; exit 1; }

command -v go >/dev/null || die "Go is not installed; Go >= 1.26 is needed to build the Helm renderer"
go_version=$(go env GOVERSION)
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) die "Go >= 1.26 is needed, found $go_version" ;;
esac

helm_version=$(awk '$1 == "helm.sh/helm/v3" && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == "helm.sh/helm/v3" { print $3; exit }' "$dir/go.mod")
client_go=$(awk '$1 == "k8s.io/client-go" && $2 ~ /^v/ { print $2; exit }' "$dir/go.mod")
[ -n "$helm_version" ] && [ -n "$client_go" ] || die "hack/tools/helm-renderer/go.mod names no helm.sh/helm/v3 or k8s.io/client-go version"

# The commit each pinned release was built from (helm's Makefile puts `git rev-parse HEAD` in);
# the module proxy serves no commit, so it is recorded here with the pin. Source: the released
# binary's `helm version` (v3.22.0: version.BuildInfo{Version:"v3.22.0",
# GitCommit:"144ca65f8501953fa8b41cd1d37c7223051c85b7", GitTreeState:"clean", GoVersion:"go1.26.8"}).
case "$helm_version" in
  v3.22.0) git_commit=144ca65f8501953fa8b41cd1d37c7223051c85b7 release_go=go1.26.8 ;;
  *) die "no release commit recorded for helm $helm_version: add it to hack/lib/build-helm.sh" ;;
esac
[ "$go_version" = "$release_go" ] ||
  echo "helm build: note: helm $helm_version was released with $release_go; with $go_version, .Capabilities.HelmVersion.GoVersion differs from the release's" >&2

# helm's Makefile: K8S_MODULES_MAJOR_VER is client-go's major + 1, the minor is client-go's.
k8s_major=$(( $(echo "${client_go#v}" | cut -d. -f1) + 1 ))
k8s_minor=$(echo "$client_go" | cut -d. -f2)
ldflags="-w -s"
ldflags+=" -X helm.sh/helm/v3/internal/version.version=$helm_version"
ldflags+=" -X helm.sh/helm/v3/internal/version.metadata="
ldflags+=" -X helm.sh/helm/v3/internal/version.gitCommit=$git_commit"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=$k8s_major -X $pkg.k8sVersionMinor=$k8s_minor"
done

# The renderer's copies of two modules, each changed in one place, used through a -modfile that
# replaces them (go build -overlay may not touch the module cache). Generated each build from the
# pinned module in the module cache, so no copy lives in the repository; a module whose code at
# that place changed fails the build instead of silently keeping the slow path. Prints the -modfile.
#   sprig: its four rsa.GenerateKey calls go to the host (sprig-overlay/rsa_key_host.go).
#   helm:  releaseutil.SplitManifests splits documents by hand, not with its regexp
#          (helm-overlay/releaseutil/split_documents.go says why and how it stays the same);
#          the template functions toYaml and fromYaml skip their JSON round trips where that
#          changes nothing (helm-overlay/engine/fast_yaml.go; its tests hold Helm's two functions,
#          which must be the ones in funcs.go).
# bin/helm, the oracle, is built from neither copy.
renderer_modfile() {
  local sprig helm work="$bin/.helm-sprig" count manifest funcs f
  module_dir() { (cd "$dir" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
  sprig=$(module_dir github.com/Masterminds/sprig/v3)
  helm=$(module_dir helm.sh/helm/v3)
  [ -f "$sprig/crypto.go" ] || die "no crypto.go in the module cache's sprig ($sprig)"
  [ -f "$helm/pkg/releaseutil/manifest.go" ] || die "no pkg/releaseutil/manifest.go in the module cache's helm ($helm)"
  rm -rf "$work" && mkdir -p "$work"
  cp -r "$sprig" "$work/sprig" && chmod -R u+w "$work/sprig"
  sed -i 's/rsa\.GenerateKey(rand\.Reader, /mooringRSAKey(rand.Reader, /g' "$work/sprig/crypto.go"
  count=$(grep -c 'mooringRSAKey(rand.Reader, ' "$work/sprig/crypto.go" || true)
  [ "$count" = 4 ] || die "sprig's crypto.go has $count rsa.GenerateKey calls, the renderer expects 4: review sprig-overlay/"
  cp "$dir/sprig-overlay/rsa_key_host.go" "$work/sprig/"
  cp -r "$helm" "$work/helm" && chmod -R u+w "$work/helm"
  manifest="$work/helm/pkg/releaseutil/manifest.go"
  grep -qF 'var sep = regexp.MustCompile("(?:^|\\s*\n)---\\s*")' "$manifest" ||
    die "helm's releaseutil no longer splits with the regexp helm-overlay/releaseutil/split_documents.go stands in for: review it"
  sed -i 's/docs := sep\.Split(bigFileTmp, -1)/docs := mooringSplitDocuments(bigFileTmp)/' "$manifest"
  count=$(grep -c 'mooringSplitDocuments(bigFileTmp)' "$manifest" || true)
  [ "$count" = 1 ] || die "helm's SplitManifests has changed ($count replaced calls, 1 expected): review helm-overlay/releaseutil/"
  cp "$dir/helm-overlay/releaseutil/split_documents.go" "$work/helm/pkg/releaseutil/"
  funcs="$work/helm/pkg/engine/funcs.go"
  for f in toYAML fromYAML; do
    [ "$(sed -n "/^func $f(/,/^}/p" "$funcs")" = "$(sed -n "/^func $f(/,/^}/p" "$dir/helm-overlay/engine/helm_funcs_test.go")" ] ||
      die "helm's $f is not the one helm-overlay/engine's tests compare the fast path with: review helm-overlay/engine/"
  done
  sed -i -e 's/^\(\t\t"toYaml": *\)toYAML,$/\1mooringToYAML,/' -e 's/^\(\t\t"fromYaml": *\)fromYAML,$/\1mooringFromYAML,/' "$funcs"
  count=$(grep -cE '"(toYaml|fromYaml)": +mooring(To|From)YAML,' "$funcs" || true)
  [ "$count" = 2 ] || die "helm's funcMap has changed ($count of toYaml and fromYaml replaced, 2 expected): review helm-overlay/engine/"
  cp "$dir/helm-overlay/engine/fast_yaml.go" "$work/helm/pkg/engine/"
  cp "$dir/go.mod" "$work/renderer.mod" && cp "$dir/go.sum" "$work/renderer.sum"
  # Relative to the module's directory, so the paths recorded in the binary are the same in every clone.
  echo "replace github.com/Masterminds/sprig/v3 => ../../../bin/.helm-sprig/sprig" >> "$work/renderer.mod"
  echo "replace helm.sh/helm/v3 => ../../../bin/.helm-sprig/helm" >> "$work/renderer.mod"
  echo "$work/renderer.mod"
}

# build NAME OUTPUT GOOS GOARCH BUILDMODE PACKAGE MODFILE [SOURCE...]: MODFILE a go build -modfile
# or empty; the sources besides go.mod and go.sum that the binary is built from
build() {
  local name=$1 out=$2 goos=$3 goarch=$4 mode=$5 pkg=$6 modfile=$7 stamp stamp_file="$bin/.$1.stamp"
  shift 7
  stamp=$( (cat "$dir/go.mod" "$dir/go.sum" "$@"; echo "$go_version $goos/$goarch $mode $ldflags") | sha256sum | cut -c1-16)
  if [ -f "$out" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    echo "helm build: $name (helm $helm_version) is up to date"
    return
  fi
  echo "helm build: building $name (helm $helm_version, $goos/$goarch; a cold build takes several minutes on 2 cores, a cached one seconds)"
  local start=$SECONDS
  (cd "$dir" && GOOS=$goos GOARCH=$goarch nice -n 10 go build -buildmode="$mode" -trimpath ${modfile:+-modfile "$modfile"} -ldflags "$ldflags" -o "$out.tmp" "$pkg") ||
    die "go build of $name failed (see above)"
  mv "$out.tmp" "$out"
  echo "$stamp" > "$stamp_file"
  echo "helm build: $name built in $((SECONDS - start))s"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(renderer helm)
for w in "${wanted[@]}"; do
  case "$w" in
    renderer)
      modfile=$(renderer_modfile) || exit 1
      build mooring-helm.wasm "$bin/mooring-helm.wasm" wasip1 wasm c-shared . "$modfile" \
        "$dir"/*.go "$dir"/sprig-overlay/*.go "$dir"/helm-overlay/*/*.go "$bin/.helm-sprig/sprig/crypto.go" \
        "$bin/.helm-sprig/helm/pkg/releaseutil/manifest.go" "$bin/.helm-sprig/helm/pkg/engine/funcs.go" "$modfile" ;;
    helm) build helm "$bin/helm" "$(go env GOHOSTOS)" "$(go env GOHOSTARCH)" exe helm.sh/helm/v3/cmd/helm "" ;;
    *) die "unknown target $w (known: renderer, helm)" ;;
  esac
done

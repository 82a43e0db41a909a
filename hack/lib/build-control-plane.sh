#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver, kubectl, etcd) from the Go module proxy into bin/.
# With --with-workloads it also builds kube-controller-manager, kube-scheduler (same k8s wrapper)
# and kwok (hack/tools/kwok), which Deployments, Jobs and Pods need to make progress.
# Each binary carries a stamp of its wrapper module and the Go version; a matching stamp skips
# the build, so a second run costs a second. Go's module and build caches stay in their default
# places under $HOME, which is what makes a rebuild on the same machine fast.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/bin"
export GOTOOLCHAIN=local   # a too-new module must fail here, not fetch another toolchain
export CGO_ENABLED=0
export GOFLAGS=-buildvcs=false
mkdir -p "$bin"

die() { echo "control-plane build: $*" >&2; exit 1; }

with_workloads=0
for arg in "$@"; do
  case "$arg" in
    --with-workloads) with_workloads=1 ;;
    *) die "unknown argument $arg (usage: hack/control-plane build [--with-workloads])" ;;
  esac
done

command -v go >/dev/null || die "Go is not installed; Go >= 1.26 is needed to build the control plane"
go_version=$(go env GOVERSION)
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) die "Go >= 1.26 is needed, found $go_version" ;;
esac

# module_version DIR MODULE: the version a wrapper's go.mod requires.
module_version() {
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1/go.mod"
}

stamp_of() { # DIR EXTRA: what the binaries were built from
  (cat "$1/go.mod" "$1/go.sum"; echo "$go_version $2") | sha256sum | cut -c1-16
}

# build NAME DIR STAMP LDFLAGS OUTPUTS PACKAGE...: go build with a running count of compiled
# packages. OUTPUTS names the binaries, in package order.
build() {
  local name=$1 dir=$2 stamp=$3 ldflags=$4 outputs=$5; shift 5
  local stamp_file="$bin/.${name%% *}.stamp"
  local wanted_all=1 b out="$bin/"
  for b in $outputs; do [ -x "$bin/$b" ] || wanted_all=0; done
  [ $# -gt 1 ] || out="$bin/$outputs"
  if [ "$wanted_all" = 1 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    echo "control-plane build: $name is up to date"
    return
  fi
  echo "control-plane build: building $name (a cold build takes about 10 minutes on 2 cores; a cached one seconds)"
  local total
  total=$(cd "$dir" && go list -deps "$@" 2>/dev/null | wc -l)
  local start=$SECONDS
  (cd "$dir" && go build -v -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$out" "$@" 2>&1) |
    awk -v total="$total" -v name="$name" -v start="$start" '
      /^(go: |#|.*\.go:[0-9]+)/ { print; next }   # errors and downloads pass through
      { n++; if (n % 100 == 0) { printf "control-plane build: %s: %d of at most %d packages compiled\n", name, n, total; fflush() } }'
  [ "${PIPESTATUS[0]}" = 0 ] || die "go build of $name failed (see above)"
  for b in $outputs; do [ -x "$bin/$b" ] || die "go build of $name produced no $b"; done
  echo "$stamp" > "$stamp_file"
  echo "control-plane build: $name built in $((SECONDS - start))s"
}

kube_dir="$root/hack/tools/kube"
kube_version=$(module_version "$kube_dir" k8s.io/kubernetes)
[ -n "$kube_version" ] || die "hack/tools/kube/go.mod names no k8s.io/kubernetes version"
minor=$(echo "$kube_version" | cut -d. -f2)
kube_ld="-s -w"
for kv in gitMajor=1 "gitMinor=$minor" "gitVersion=$kube_version" gitTreeState=clean \
  gitCommit=0000000000000000000000000000000000000000 buildDate=1970-01-01T00:00:00Z; do
  kube_ld+=" -X k8s.io/component-base/version.$kv"
done
build "kube-apiserver $kube_version" "$kube_dir" "$(stamp_of "$kube_dir" "$kube_ld")" "$kube_ld" "kube-apiserver kubectl" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl

etcd_dir="$root/hack/tools/etcd"
etcd_version=$(module_version "$etcd_dir" go.etcd.io/etcd/server/v3)
build "etcd $etcd_version" "$etcd_dir" "$(stamp_of "$etcd_dir" "")" "-s -w" etcd go.etcd.io/etcd/server/v3

if [ "$with_workloads" = 1 ]; then
  # Own stamp, so the base set stays buildable without them; the Go build cache is shared.
  build "kube-controller-manager $kube_version" "$kube_dir" "$(stamp_of "$kube_dir" "$kube_ld")" "$kube_ld" \
    "kube-controller-manager kube-scheduler" \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
  kwok_dir="$root/hack/tools/kwok"
  kwok_version=$(module_version "$kwok_dir" sigs.k8s.io/kwok)
  [ -n "$kwok_version" ] || die "hack/tools/kwok/go.mod names no sigs.k8s.io/kwok version"
  build "kwok $kwok_version" "$kwok_dir" "$(stamp_of "$kwok_dir" "")" "-s -w" kwok sigs.k8s.io/kwok/cmd/kwok
  # kwok >= 0.8 refuses to start without Stage config. These are the stages kwokctl uses by
  # default (node init + lease heartbeat; pod ready, complete for Job pods, delete), taken from
  # the same module version so they always match the binary. Cheap, so always regenerated.
  kwok_src=$(cd "$kwok_dir" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) || die "cannot locate the kwok $kwok_version module"
  {
    echo "# Generated by hack/lib/build-control-plane.sh from sigs.k8s.io/kwok $kwok_version; do not edit."
    for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
      pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
      echo '---'
      cat "$kwok_src/kustomize/stage/$stage.yaml" || die "kwok $kwok_version has no stage $stage"
    done
  } > "$bin/kwok-stages.yaml.tmp"
  mv "$bin/kwok-stages.yaml.tmp" "$bin/kwok-stages.yaml"
  echo "control-plane build: bin/ has kube-apiserver $kube_version, kubectl $kube_version, etcd $etcd_version," \
    "kube-controller-manager $kube_version, kube-scheduler $kube_version, kwok $kwok_version"
else
  echo "control-plane build: bin/ has kube-apiserver $kube_version, kubectl $kube_version, etcd $etcd_version"
fi

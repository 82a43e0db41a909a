#!/usr/bin/env bash
# Rewrites hack/tools/kube/go.mod for another Kubernetes release: k8s.io/kubernetes at vX.Y.Z and a
# replace for every staging module its own go.mod points at ./staging, pinned to v0.Y.Z.
set -euo pipefail
version=${1:?usage: hack/control-plane pin 1.36.3}
version=${version#v}
dir=$(cd "$(dirname "$0")/../tools/kube" && pwd)
export GOTOOLCHAIN=local
gomod=$(go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
[ -f "$gomod" ] || { echo "k8s.io/kubernetes v$version did not resolve" >&2; exit 1; }
go_line=$(sed -n 's/^go \(.*\)$/\1/p' "$gomod")
{
  sed -n '1,/^module /p' "$dir/go.mod"
  printf '\ngo %s\n\ngodebug default=go%s\n\n' "$go_line" "$(echo "$go_line" | cut -d. -f1,2)"
  # kube-controller-manager and kube-scheduler are for `build --with-workloads`.
  printf 'tool (\n'
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    printf '\tk8s.io/kubernetes/cmd/%s\n' "$cmd"
  done
  printf ')\n\n'
  printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$version"
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$gomod" | sort |
    while read -r m; do printf '\t%s => %s v0.%s\n' "$m" "$m" "${version#1.}"; done
  printf ')\n'
} > "$dir/go.mod.new"
mv "$dir/go.mod.new" "$dir/go.mod"
(cd "$dir" && go mod tidy)
echo "hack/tools/kube now builds Kubernetes v$version; run hack/control-plane build"

#!/usr/bin/env bash
# Builds the test peers: the real programs meshjob's output goes through after meshjob (Istio's
# istioctl and pilot-agent, Helm 4 and 3, kustomize, etcd and kube-apiserver), each from its
# own Go module as the Go module proxy serves it. Each version is pinned here and only here;
# each peer is built once into <cache>/<peer>-<version>/ and a later run prints "cached".
#
#   scripts/peers.sh                  builds every peer
#   scripts/peers.sh helm4 kustomize  builds those
#   scripts/peers.sh --print-env      prints MESHJOB_PEERS_BIN=<dir>, the directory the tests
#                                     read the binaries from (istioctl, pilot-agent, helm4,
#                                     helm3, kustomize, etcd, kube-apiserver), builds nothing
#   scripts/peers.sh --list           the peers and their pinned versions
#
# Environment: MESHJOB_PEERS_DIR (the cache, default ~/.cache/meshjob-peers), MESHJOB_PEERS_JOBS
# (go build -p, default 1: the machine is shared). Builds run with CGO_ENABLED=0,
# GOFLAGS=-mod=mod, and a module cache and build cache of their own under the cache directory,
# each in a throwaway module (go mod init, require, go build): nothing here touches the
# repository's files.
set -euo pipefail

# ---- the pins -------------------------------------------------------------------------------
# istio.io/istio tags no Go module versions: the proxy serves pseudo-versions of main only.
# This one is main of 2026-08-27, whose VERSION file says 1.31 (istioctl reports 1.31-dev).
ISTIO=v0.0.0-20260827124520-eed52ebb66ad
HELM4=v4.3.2
HELM3=v3.21.4
KUSTOMIZE=v5.8.2
# kube-apiserver: k8s.io/kubernetes requires its staging modules (k8s.io/api, ...) at v0.0.0
# and replaces them by ./staging/src/...; here each is replaced by its release v0.37.2.
KUBERNETES=v1.37.2
ETCD=v3.7.3
ALL=(istio helm4 helm3 kustomize etcd kube-apiserver linkerd)
# ---------------------------------------------------------------------------------------------

root=${MESHJOB_PEERS_DIR:-$HOME/.cache/meshjob-peers}
jobs=${MESHJOB_PEERS_JOBS:-1}
bindir=$root/bin

# spec PEER: sets mod (module), ver, targets ("binary=package" words).
spec() {
  case $1 in
  istio)
    mod=istio.io/istio ver=$ISTIO
    targets="istioctl=istio.io/istio/istioctl/cmd/istioctl pilot-agent=istio.io/istio/pilot/cmd/pilot-agent"
    ;;
  helm4) mod=helm.sh/helm/v4 ver=$HELM4 targets="helm4=helm.sh/helm/v4/cmd/helm" ;;
  helm3) mod=helm.sh/helm/v3 ver=$HELM3 targets="helm3=helm.sh/helm/v3/cmd/helm" ;;
  kustomize)
    mod=sigs.k8s.io/kustomize/kustomize/v5 ver=$KUSTOMIZE
    targets="kustomize=sigs.k8s.io/kustomize/kustomize/v5"
    ;;
  etcd) mod=go.etcd.io/etcd/server/v3 ver=$ETCD targets="etcd=go.etcd.io/etcd/server/v3" ;;
  kube-apiserver)
    mod=k8s.io/kubernetes ver=$KUBERNETES
    targets="kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver"
    ;;
  linkerd) mod=github.com/linkerd/linkerd2 ver=latest targets="" ;;
  *)
    echo "peers.sh: no peer named '$1' (peers: ${ALL[*]})" >&2
    return 2
    ;;
  esac
}

# The -X flags each project's own build sets, so that the binaries say what they are:
#   istio/istio common/scripts/report_build_info.sh (istio.io/istio/pkg/version.*), with the
#     version Makefile.core.mk makes: the VERSION file's, plus "-dev";
#   helm/helm Makefile (LDFLAGS += -X helm.sh/helm/vN/internal/version.version=...);
#   kubernetes/kubernetes hack/lib/version.sh (k8s.io/component-base/version.gitVersion, ...).
ldflags_of() { # peer module-dir
  case $1 in
  istio)
    local rev=${ISTIO##*-}
    printf -- '-s -w -X istio.io/istio/pkg/version.buildVersion=%s-dev' "$(cat "$2/VERSION")"
    printf -- ' -X istio.io/istio/pkg/version.buildGitRevision=%s' "$rev"
    printf -- ' -X istio.io/istio/pkg/version.buildStatus=Clean -X istio.io/istio/pkg/version.buildTag=%s' "$ISTIO"
    ;;
  helm4) printf -- '-s -w -X helm.sh/helm/v4/internal/version.version=%s' "$HELM4" ;;
  helm3) printf -- '-s -w -X helm.sh/helm/v3/internal/version.version=%s' "$HELM3" ;;
  kube-apiserver)
    local minor=${KUBERNETES#v1.}
    printf -- '-s -w -X k8s.io/component-base/version.gitVersion=%s' "$KUBERNETES"
    printf -- ' -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=%s' "${minor%%.*}"
    ;;
  *) printf -- '-s -w' ;;
  esac
}

goenv() {
  export GOMODCACHE=$root/gomod GOCACHE=$root/gocache GOPATH=$root/gopath
  export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
}

link() { # dir targets
  mkdir -p "$bindir"
  local t
  for t in $2; do ln -sfn "$1/bin/${t%%=*}" "$bindir/${t%%=*}"; done
}

# The versions the binaries report, printed after each build and each cached run.
report() { # peer dir
  case $1 in
  istio) echo "  istioctl version --remote=false: $("$2/bin/istioctl" version --remote=false 2>&1 | head -n 1)" ;;
  helm4 | helm3) echo "  helm version: $("$2/bin/$1" version --short 2>&1 | head -n 1)" ;;
  kustomize) echo "  kustomize version: $("$2/bin/kustomize" version 2>&1 | head -n 1)" ;;
  etcd) echo "  etcd --version: $("$2/bin/etcd" --version 2>&1 | head -n 1)" ;;
  kube-apiserver) echo "  kube-apiserver --version: $("$2/bin/kube-apiserver" --version 2>&1 | head -n 1)" ;;
  esac
}

build() { # peer
  local name=$1 mod ver targets dir tmp t start moddir
  spec "$name"
  goenv
  if [ -z "$targets" ]; then
    # linkerd: github.com/linkerd/linkerd2 is not on the Go module proxy (403 "This module
    # version is not available." on 2026-12-07); asked again each run, so that it is built the
    # day it is served.
    local answer
    if answer=$(go list -m -versions "$mod" 2>&1); then
      echo "$name: the proxy lists $answer, but no build is written for it yet"
    else
      echo "$name: not built: go list -m -versions $mod says: $(tr '\n' ' ' <<<"$answer")"
    fi
    return 0
  fi
  dir=$root/$name-$ver
  if [ -f "$dir/built" ] && [ "$name" = istio ] && [ ! -f "$dir/envoy_bootstrap_tmpl.json" ]; then
    # Built before the template was kept: taken from the module cache (no download).
    cp "$(go mod download -json "$mod@$ver" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')/tools/packaging/common/envoy_bootstrap.json" \
      "$dir/envoy_bootstrap_tmpl.json"
  fi
  if [ -f "$dir/built" ]; then
    echo "$name $ver: cached in $dir ($(cat "$dir/built"))"
    link "$dir" "$targets"
    report "$name" "$dir"
    return 0
  fi
  echo "$name $ver: building into $dir (go build -p $jobs; log in $dir.tmp/build.log)"
  tmp=$dir.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp/mod" "$tmp/bin"
  start=$(date +%s)
  # Each step ends the build when it fails (`|| exit 1`: errexit does not hold in a subshell
  # that is the left side of `||`).
  (
    cd "$tmp/mod" || exit 1
    go mod init "meshjob.peers/$name" >/dev/null 2>&1 || exit 1
    moddir=$(go mod download -json "$mod@$ver" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') || exit 1
    if [ "$name" = kube-apiserver ]; then
      # k8s.io/kubernetes go.mod: `replace k8s.io/api => ./staging/src/k8s.io/api` and the like;
      # each staging module is released as k8s.io/<name> v0.<minor>.<patch> with the release.
      local staging=v0${KUBERNETES#v1}
      go mod edit -json "$moddir/go.mod" |
        python3 -c 'import json,sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["New"]["Path"].startswith("./staging/"):
        print(r["Old"]["Path"])' |
        while IFS= read -r m; do go mod edit -replace "$m=$m@$staging" || exit 1; done || exit 1
    fi
    local pkgs=()
    for t in $targets; do pkgs+=("${t#*=}@$ver"); done
    go get "${pkgs[@]}" || exit 1
    if [ "$name" = istio ]; then
      # pilot-agent writes Envoy's bootstrap from this template, which its image keeps at
      # /var/lib/istio/envoy/envoy_bootstrap_tmpl.json (istio/istio
      # tools/packaging/common/envoy_bootstrap.json; pilot-agent reads it from
      # pkg/bootstrap/instance.go DefaultCfgDir): the pilot-agent test needs it.
      cp "$moddir/tools/packaging/common/envoy_bootstrap.json" "$tmp/envoy_bootstrap_tmpl.json" || exit 1
    fi
    for t in $targets; do
      local s
      s=$(date +%s)
      go build -p "$jobs" -trimpath -ldflags "$(ldflags_of "$name" "$moddir")" \
        -o "$tmp/bin/${t%%=*}" "${t#*=}" || exit 1
      echo "${t%%=*}: go build $(($(date +%s) - s)) s" >>"$tmp/times"
    done
  ) >"$tmp/build.log" 2>&1 || {
    echo "!!! $name $ver: the build failed; the end of $tmp/build.log:" >&2
    tail -n 20 "$tmp/build.log" >&2
    return 1
  }
  printf 'built in %s s on %s cores, -p %s (a shared build cache: what an earlier build compiled is reused): %s' "$(($(date +%s) - start))" "$(nproc)" "$jobs" \
    "$(tr '\n' ';' <"$tmp/times")" >"$tmp/built"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  echo "$name $ver: $(cat "$dir/built")"
  link "$dir" "$targets"
  report "$name" "$dir"
}

case ${1:-} in
--print-env)
  echo "MESHJOB_PEERS_BIN=$bindir"
  exit 0
  ;;
--list)
  for p in "${ALL[@]}"; do
    spec "$p"
    echo "$p $mod@$ver"
  done
  exit 0
  ;;
-h | --help)
  sed -n '2,20p' "$0"
  exit 0
  ;;
esac

want=("$@")
[ "${#want[@]}" -gt 0 ] || want=("${ALL[@]}")
for p in "${want[@]}"; do spec "$p" >/dev/null; done
failed=()
for p in "${want[@]}"; do
  build "$p" || failed+=("$p")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "!!! peers not built: ${failed[*]}" >&2
  exit 1
fi

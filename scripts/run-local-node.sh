#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine, as root: installs what a node needs from Debian's
# packages, builds nodeagent, builds the base images offline, starts a private containerd and
# a local registry, and runs nodeagent in standalone mode on the pods in examples/ (or the
# manifest directory given as the first argument). Ctrl-C stops the agent and tears down the
# containerd and registry it started (containers included).
#
# With --apiserver as the first argument it also starts orch-apiserver (SQLite, on
# 127.0.0.1:6443) and runs the agent in API-server mode: the node registers, and pods created
# with `kubectl --kubeconfig <state>/admin.orchconfig create -f pod.yaml` (spec.nodeName set to
# the node) run on it beside the static pods of examples/.
#
# Environment: NODEAGENT_LOCAL_DIR (state, default /var/lib/nodeagent-local),
#              NODEAGENT_REGISTRY_PORT (default 5000). Extra arguments after the manifest
#              directory are passed to nodeagent (e.g. -v=2).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
apiserver=0
if [ "${1:-}" = --apiserver ]; then apiserver=1; shift; fi
manifests=$(cd "${1:-examples}" && pwd)
shift || true
state=${NODEAGENT_LOCAL_DIR:-/var/lib/nodeagent-local}
port=${NODEAGENT_REGISTRY_PORT:-5000}

if [ "$(id -u)" -ne 0 ]; then
  echo "run-local-node: run as root (containerd, cgroups, mounts and networking need it)" >&2
  exit 1
fi

echo "== packages"
bash scripts/install-packages.sh
echo "== build"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent

mkdir -p "$state"
images=$state/images
echo "== images (busybox and pause, built from busybox-static)"
bash scripts/node-env/build-images.sh "$images" >/dev/null

echo "== registry on 127.0.0.1:$port"
bash scripts/node-env/registry-down.sh "$state/registry" >/dev/null 2>&1 || true
bash scripts/node-env/registry-up.sh "$state/registry" "$port" --images "$images" >/dev/null

echo "== containerd"
bash scripts/node-env/containerd-down.sh "$state/containerd" >/dev/null 2>&1 || true
bash scripts/node-env/containerd-up.sh "$state/containerd" --registry "127.0.0.1:$port" --images "$images" >/dev/null
# shellcheck disable=SC1091
. "$state/containerd/instance.env"

agent_args=()
mode="standalone mode"
if [ "$apiserver" -eq 1 ]; then
  echo "== orch-apiserver on https://127.0.0.1:6443 (SQLite in $state/apiserver)"
  mkdir -p "$state/apiserver"
  rm -f "$state/admin.orchconfig"
  ./bin/orch-apiserver --bind-address=127.0.0.1 --secure-port=6443 --data-dir="$state/apiserver/data" \
    --cert-dir="$state/apiserver/pki" --write-admin-orchconfig="$state/admin.orchconfig" \
    >>"$state/apiserver/apiserver.log" 2>&1 &
  apiserver_pid=$!
  for _ in $(seq 1 200); do
    [ -f "$state/admin.orchconfig" ] && curl -ksf https://127.0.0.1:6443/readyz >/dev/null 2>&1 && break
    kill -0 "$apiserver_pid" 2>/dev/null || { echo "orch-apiserver exited; see $state/apiserver/apiserver.log" >&2; exit 1; }
    sleep 0.1
  done
  agent_args=(--orchconfig="$state/admin.orchconfig" --node-ip=127.0.0.1)
  mode="API-server mode (orch-apiserver on https://127.0.0.1:6443; kubectl --kubeconfig $state/admin.orchconfig get nodes,pods)"
fi

cleanup() {
  echo
  if [ -n "${apiserver_pid:-}" ]; then
    echo "== stopping orch-apiserver"
    kill "$apiserver_pid" 2>/dev/null || true
    wait "$apiserver_pid" 2>/dev/null || true
  fi
  echo "== stopping containerd and the registry"
  bash "$repo/scripts/node-env/containerd-down.sh" "$state/containerd" >/dev/null 2>&1 || true
  bash "$repo/scripts/node-env/registry-down.sh" "$state/registry" >/dev/null 2>&1 || true
}
trap cleanup EXIT

cat <<INFO

nodeagent is starting in $mode on $manifests
  runtime endpoint  $ENDPOINT (pod subnet $SUBNET, bridge $BRIDGE)
  pod data          $state/root      container logs  /var/log/pods
  the web example   http://127.0.0.1:18080/   (examples/web.yaml, hostPort)
  health            http://127.0.0.1:10248/healthz
  add, edit or remove files in $manifests: pods follow within a second
  stop              Ctrl-C (containers, containerd and the registry are stopped)

INFO
./bin/nodeagent \
  --container-runtime-endpoint="$ENDPOINT" \
  --pod-manifest-path="$manifests" \
  --root-dir="$state/root" \
  --cert-dir="$state/pki" \
  --cgroup-root="$CGROUP_ROOT" \
  --file-check-frequency=20s \
  ${agent_args[@]+"${agent_args[@]}"} \
  "$@" || status=$?
exit "${status:-0}"

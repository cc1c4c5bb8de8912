#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine, as root: installs what a node needs from Debian's
# packages, builds nodeagent, builds the base images offline, starts a private containerd and
# a local registry, and runs nodeagent in standalone mode on the pods in examples/ (or the
# manifest directory given as the first argument). Ctrl-C stops the agent and tears down the
# containerd and registry it started (containers included).
#
# Environment: NODEAGENT_LOCAL_DIR (state, default /var/lib/nodeagent-local),
#              NODEAGENT_REGISTRY_PORT (default 5000). Extra arguments after the manifest
#              directory are passed to nodeagent (e.g. -v=2).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
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

cleanup() {
  echo
  echo "== stopping containerd and the registry"
  bash "$repo/scripts/node-env/containerd-down.sh" "$state/containerd" >/dev/null 2>&1 || true
  bash "$repo/scripts/node-env/registry-down.sh" "$state/registry" >/dev/null 2>&1 || true
}
trap cleanup EXIT

cat <<INFO

nodeagent is starting in standalone mode on $manifests
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
  "$@" || status=$?
exit "${status:-0}"

#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine, as root: installs what a node needs from Debian's
# packages, builds nodeagent, builds the base images offline, starts a private containerd and a
# local registry, and runs nodeagent in standalone mode on the pods of examples/ (or of the
# manifest directory given as the first argument). Ctrl-C (or SIGTERM) stops the agent and tears
# down the containerd and registry it started, containers included.
#
# With --apiserver as the first argument it also starts orch-apiserver (SQLite) and runs the agent
# in API-server mode: the node registers, and pods created with
# `kubectl --kubeconfig <state>/admin.orchconfig create -f pod.yaml` (spec.nodeName set to the
# node) run on it beside the static pods. The agent's secure port then authenticates and
# authorizes every request against the API server (webhook), as in a cluster; orch-apiserver
# presents its admin client certificate to the agent for kubectl logs and exec.
#
# The agent gets its settings from a configuration file written to <state>/nodeagent.yaml. Its
# secure port listens on 127.0.0.1 only; in standalone mode, with no API server to check
# credentials against, it serves anyone on this machine and offers no exec, attach or logs.
#
# Environment (defaults in brackets); a port left unset moves to the next free one when its
# default is taken, a port that is set must be free:
#   NODEAGENT_LOCAL_DIR       state directory [/var/lib/nodeagent-local]; one run at a time each
#   NODEAGENT_NODE_NAME       node name [the hostname; with another state directory, hostname-<its name>]
#   NODEAGENT_REGISTRY_PORT   local registry [5000]
#   NODEAGENT_APISERVER_PORT  orch-apiserver, with --apiserver [6443]
#   NODEAGENT_PORT            the agent's secure port [10250]
#   NODEAGENT_HEALTHZ_PORT    the agent's health port [10248]
#   NODEAGENT_WEB_PORT        host port of the web example, when running examples/ [18080]
# Extra arguments after the manifest directory are passed to nodeagent (e.g. -v=4).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
apiserver=0
if [ "${1:-}" = --apiserver ]; then apiserver=1; shift; fi
examples=0
if [ -n "${1:-}" ] && [ "${1#-}" = "$1" ]; then
  manifests=$(cd "$1" && pwd)
  shift
else
  examples=1
fi
default_state=/var/lib/nodeagent-local
state=${NODEAGENT_LOCAL_DIR:-$default_state}

fail() {
  echo "run-local-node: $*" >&2
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run as root (containerd, cgroups, mounts and networking need it)"

# One run per state directory: a second one would tear down the first one's containerd.
mkdir -p "$state"
state=$(cd "$state" && pwd)
exec 9>"$state/run.lock"
flock -n 9 || fail "another run-local-node is using $state; set NODEAGENT_LOCAL_DIR to another directory"

if [ -n "${NODEAGENT_NODE_NAME:-}" ]; then
  node_name=$NODEAGENT_NODE_NAME
elif [ "$state" = "$default_state" ]; then
  node_name=$(hostname | tr '[:upper:]' '[:lower:]')
else
  # Two nodes on one machine must differ in name: their static pods' UIDs and log directories do.
  node_name=$(printf '%s-%s' "$(hostname)" "$(basename "$state")" | tr '[:upper:]_.' '[:lower:]--' | tr -cd 'a-z0-9-')
fi

# Whether the port is already chosen for something else, something listens on it, or a CNI
# host-port rule forwards it.
picked=' '
port_in_use() {
  case "$picked" in *" $1 "*) return 0 ;; esac
  [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
  iptables -t nat -S 2>/dev/null | grep -qE -- "--dport $1( |$)"
}

# pick_port VARIABLE DEFAULT: the variable's port, which must be free, or the first free one from DEFAULT on.
pick_port() {
  local name=$1 port=${!1:-}
  if [ -n "$port" ]; then
    port_in_use "$port" && fail "port $port ($name) is in use; set $name to a free port"
    echo "$port"
    return
  fi
  port=$2
  while port_in_use "$port"; do
    port=$((port + 1))
    [ "$port" -lt $(($2 + 100)) ] || fail "no free port in $2-$port; set $name to a free port"
  done
  echo "$port"
}

echo "== packages"
bash scripts/install-packages.sh
echo "== build"
if [ ! -d node_modules ] || { [ package-lock.json -nt node_modules/.package-lock.json ] && ! npm ls --depth=0 >/dev/null 2>&1; }; then
  npm ci --no-audit --no-fund
fi
npm run build --silent

registry_port=$(pick_port NODEAGENT_REGISTRY_PORT 5000)
picked+="$registry_port "
agent_port=$(pick_port NODEAGENT_PORT 10250)
picked+="$agent_port "
healthz_port=$(pick_port NODEAGENT_HEALTHZ_PORT 10248)
picked+="$healthz_port "
if [ "$examples" -eq 1 ]; then
  # The examples are copied so that the web example's host port can differ between runs.
  web_port=$(pick_port NODEAGENT_WEB_PORT 18080)
  picked+="$web_port "
  manifests=$state/manifests
  rm -rf "$manifests"
  mkdir -p "$manifests"
  cp examples/*.yaml "$manifests/"
  sed -i "s/hostPort: 18080/hostPort: $web_port/; s#127.0.0.1:18080#127.0.0.1:$web_port#" "$manifests/web.yaml"
elif [ -f "$manifests/web.yaml" ]; then
  web_port=$(sed -n 's/^ *hostPort: *\([0-9]*\).*/\1/p' "$manifests/web.yaml" | head -n 1)
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
trap 'exit 130' INT
trap 'exit 143' TERM

images=$state/images
echo "== images (busybox and pause, built from busybox-static)"
bash scripts/node-env/build-images.sh "$images" >/dev/null

# The daemons must not inherit the lock (descriptor 9): it is released when this script ends.
echo "== registry on 127.0.0.1:$registry_port"
bash scripts/node-env/registry-down.sh "$state/registry" >/dev/null 2>&1 || true
bash scripts/node-env/registry-up.sh "$state/registry" "$registry_port" --images "$images" >/dev/null 9>&-

echo "== containerd"
bash scripts/node-env/containerd-down.sh "$state/containerd" >/dev/null 2>&1 || true
bash scripts/node-env/containerd-up.sh "$state/containerd" --registry "127.0.0.1:$registry_port" --images "$images" >/dev/null 9>&-
# shellcheck disable=SC1091
. "$state/containerd/instance.env"

config=$state/nodeagent.yaml
cat >"$config" <<CONFIG
apiVersion: nodeagent.config.orch.io/v1beta1
kind: NodeagentConfiguration
staticPodPath: $manifests
cgroupRoot: $CGROUP_ROOT
address: 127.0.0.1
port: $agent_port
healthzPort: $healthz_port
podLogsDir: $state/pod-logs
CONFIG

agent_args=()
mode="standalone mode"
if [ "$apiserver" -eq 1 ]; then
  apiserver_port=$(pick_port NODEAGENT_APISERVER_PORT 6443)
  pki=$state/apiserver/pki
  client=$state/apiserver/nodeagent-client
  mkdir -p "$state/apiserver"
  start_apiserver() {
    rm -f "$state/admin.orchconfig"
    ./bin/orch-apiserver --bind-address=127.0.0.1 --secure-port="$apiserver_port" --data-dir="$state/apiserver/data" \
      --cert-dir="$pki" --write-admin-orchconfig="$state/admin.orchconfig" "$@" \
      >>"$state/apiserver/apiserver.log" 2>&1 9>&- &
    apiserver_pid=$!
    for _ in $(seq 1 300); do
      [ -f "$state/admin.orchconfig" ] && curl -ksf "https://127.0.0.1:$apiserver_port/readyz" >/dev/null 2>&1 && return 0
      kill -0 "$apiserver_pid" 2>/dev/null || fail "orch-apiserver exited; see $state/apiserver/apiserver.log"
      sleep 0.1
    done
    fail "orch-apiserver not ready after 30 s; see $state/apiserver/apiserver.log"
  }
  if [ ! -s "$client.crt" ] || [ ! -s "$client.key" ] || [ ! -f "$pki/ca.crt" ] || [ "$pki/ca.crt" -nt "$client.crt" ]; then
    # The client certificate orch-apiserver presents to the agent is the admin one (user admin,
    # group system:masters) signed by its CA, which a first start creates.
    echo "== orch-apiserver: creating its CA and the client certificate it presents to the agent"
    start_apiserver
    sed -n 's/^ *client-key-data: *//p' "$state/admin.orchconfig" | base64 -d >"$client.key"
    chmod 600 "$client.key"
    sed -n 's/^ *client-certificate-data: *//p' "$state/admin.orchconfig" | base64 -d >"$client.crt"
    kill "$apiserver_pid"
    wait "$apiserver_pid" || true
    unset apiserver_pid
  fi
  echo "== orch-apiserver on https://127.0.0.1:$apiserver_port (SQLite in $state/apiserver)"
  start_apiserver --nodeagent-client-certificate="$client.crt" --nodeagent-client-key="$client.key"
  cat >>"$config" <<CONFIG
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
CONFIG
  agent_args=(--orchconfig="$state/admin.orchconfig" --node-ip=127.0.0.1)
  mode="API-server mode"
else
  cat >>"$config" <<CONFIG
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
enableDebuggingHandlers: false
CONFIG
fi

echo
echo "nodeagent is starting in $mode as node $node_name on $manifests"
if [ "$examples" -eq 1 ]; then
  echo "  add, edit or remove files there: pods follow within a second (it is filled from examples/ at each start)"
else
  echo "  add, edit or remove files there: pods follow within a second"
fi
echo "  runtime endpoint  $ENDPOINT (pod subnet $SUBNET, bridge $BRIDGE)"
echo "  configuration     $config"
echo "  pod data          $state/root      container logs  $state/pod-logs"
[ -z "${web_port:-}" ] || echo "  the web example   http://127.0.0.1:$web_port/"
echo "  health            http://127.0.0.1:$healthz_port/healthz"
echo "  secure port       https://127.0.0.1:$agent_port/pods"
if [ "$apiserver" -eq 1 ]; then
  echo "  orch-apiserver    https://127.0.0.1:$apiserver_port (log $state/apiserver/apiserver.log)"
  echo "  kubectl           kubectl --kubeconfig $state/admin.orchconfig get nodes,pods"
  echo "  console           https://127.0.0.1:$apiserver_port/console/ (the server's own CA signs its certificate: $pki/ca.crt)"
  echo "    sign in with    kubectl --kubeconfig $state/admin.orchconfig create token default --duration=24h"
fi
if [ "$apiserver" -eq 1 ]; then
  echo "  stop              Ctrl-C (the agent, its containers, containerd, the registry and orch-apiserver stop)"
else
  echo "  stop              Ctrl-C (the agent, its containers, containerd and the registry stop)"
fi
echo

./bin/nodeagent --config="$config" \
  --container-runtime-endpoint="$ENDPOINT" \
  --root-dir="$state/root" \
  --cert-dir="$state/pki" \
  --hostname-override="$node_name" \
  ${agent_args[@]+"${agent_args[@]}"} \
  "$@" 9>&- &
agent_pid=$!
# A signal stops the agent first; the EXIT trap then stops the rest.
trap 'kill -TERM "$agent_pid" 2>/dev/null || true' INT TERM
status=0
while kill -0 "$agent_pid" 2>/dev/null; do
  status=0
  wait "$agent_pid" || status=$?
done
exit "$status"

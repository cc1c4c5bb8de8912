#!/usr/bin/env bash
# Starts a private containerd (with its CRI plugin) that owns DIR and nothing else, so that
# several instances run side by side (tests in parallel, a developer's and CI's):
#
#   DIR/containerd.sock     gRPC (CRI v1 + containerd API); printed on stdout when ready
#   DIR/config.toml         generated configuration (root DIR/root, state DIR/state, runc DIR/runc)
#   DIR/cni/10-nodeagent.conflist   bridge na-<id> + portmap + loopback, host-local IPAM in DIR/cni-ipam
#   DIR/certs.d/docker.io/hosts.toml   short names (busybox:1.35) resolve on the local registry
#   DIR/instance.env        SOCKET, ENDPOINT, BRIDGE, NETWORK, SUBNET, CGROUP_ROOT, PID, image refs
#   DIR/containerd.pid, DIR/containerd.log
#
# <id> is the first 8 hex digits of sha256(DIR). Pods of this instance should use a cgroup
# parent under CGROUP_ROOT (/nodeagent-<id>): containerd-down.sh removes that tree.
# The locally built images (build-images.sh) are imported into the k8s.io namespace; the pause
# image is the sandbox image.
#
# Usage: containerd-up.sh DIR [--subnet 10.X.Y.0/24] [--registry HOST:PORT] [--images IMAGEDIR]
#   --subnet    pod subnet; default: a 10.89.N.0/24 derived from DIR and not routed here yet
#               (callers running instances concurrently should reserve and pass one)
#   --registry  where docker.io short names are pulled from (default 127.0.0.1:5000)
#   --images    image cache for build-images.sh (default $NODEAGENT_IMAGE_DIR or /var/tmp/nodeagent-images)
set -euo pipefail

usage() { echo "usage: $0 DIR [--subnet CIDR] [--registry HOST:PORT] [--images IMAGEDIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1
shift
subnet=''
registry=127.0.0.1:5000
images=${NODEAGENT_IMAGE_DIR:-/var/tmp/nodeagent-images}
while [ $# -gt 0 ]; do
  case "$1" in
    --subnet) subnet=${2:?}; shift 2 ;;
    --registry) registry=${2:?}; shift 2 ;;
    --images) images=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for bin in containerd containerd-shim-runc-v2 runc ctr iptables ip /usr/lib/cni/bridge /usr/lib/cni/host-local \
  /usr/lib/cni/portmap /usr/lib/cni/loopback; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "containerd-up: missing $bin; run: bash scripts/install-packages.sh" >&2
    exit 1
  fi
done

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock=$dir/containerd.sock
if [ ${#sock} -gt 100 ]; then
  echo "containerd-up: $sock is too long for a unix socket; use a shorter DIR" >&2
  exit 1
fi
if [ -f "$dir/containerd.pid" ] && kill -0 "$(cat "$dir/containerd.pid")" 2>/dev/null; then
  echo "containerd-up: a containerd already runs for $dir (pid $(cat "$dir/containerd.pid"))" >&2
  exit 1
fi

id=$(printf '%s' "$dir" | sha256sum | cut -c1-8)
bridge=na-$id
network=nodeagent-$id
cgroup_root=/nodeagent-$id

if [ -z "$subnet" ]; then
  routes=$(ip -4 route show; ip -4 -o addr show)
  start=$((16#${id:0:2}))
  for i in $(seq 0 255); do
    n=$(((start + i) % 256))
    if ! grep -q "10\.89\.$n\." <<<"$routes"; then subnet=10.89.$n.0/24; break; fi
  done
  [ -n "$subnet" ] || { echo "containerd-up: no free 10.89.N.0/24 subnet" >&2; exit 1; }
fi
if ! [[ $subnet =~ ^[0-9]+\.[0-9]+\.[0-9]+\.0/24$ ]]; then
  echo "containerd-up: --subnet must look like 10.X.Y.0/24, got $subnet" >&2
  exit 1
fi

bash "$here/build-images.sh" "$images" >/dev/null
# shellcheck source=/dev/null
. "$images/images.env"

mkdir -p "$dir/root" "$dir/state" "$dir/runc" "$dir/cni" "$dir/cni-ipam" "$dir/opt" \
  "$dir/certs.d/docker.io" "$dir/logs"

cat >"$dir/config.toml" <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
plugin_dir = ""
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$sock"

[ttrpc]
  address = "$sock.ttrpc"

[debug]
  address = ""
  level = "warn"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_REF"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  max_container_log_line_size = 16384

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/runc"

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
TOML

cat >"$dir/cni/10-nodeagent.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "$network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni-ipam",
        "ranges": [[{ "subnet": "$subnet" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
JSON

cat >"$dir/certs.d/docker.io/hosts.toml" <<TOML
server = "http://$registry"

[host."http://$registry"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
TOML

# A session of its own, and no stdio shared with the caller: containerd outlives this script.
setsid containerd --config "$dir/config.toml" >>"$dir/containerd.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/containerd.pid"

ready=0
for _ in $(seq 1 200); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "containerd-up: containerd exited; last lines of $dir/containerd.log:" >&2
    tail -n 20 "$dir/containerd.log" >&2
    exit 1
  fi
  if [ -S "$sock" ] && ctr -a "$sock" version >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.05
done
if [ "$ready" -ne 1 ]; then
  echo "containerd-up: $sock did not answer within 10 s; see $dir/containerd.log" >&2
  exit 1
fi

ctr -a "$sock" -n k8s.io images import --snapshotter overlayfs "$images/images.oci.tar" >/dev/null

cat >"$dir/instance.env" <<ENV
DIR=$dir
SOCKET=$sock
ENDPOINT=unix://$sock
PID=$pid
BRIDGE=$bridge
NETWORK=$network
SUBNET=$subnet
CGROUP_ROOT=$cgroup_root
REGISTRY=$registry
BUSYBOX_REF=$BUSYBOX_REF
PAUSE_REF=$PAUSE_REF
BUSYBOX_IMAGE_ID=$BUSYBOX_IMAGE_ID
PAUSE_IMAGE_ID=$PAUSE_IMAGE_ID
ENV
echo "$sock"

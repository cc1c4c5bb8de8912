#!/usr/bin/env bash
# Runs Debian's docker-registry (plain HTTP on 127.0.0.1:PORT, storage under DIR) and pushes the
# locally built images to it:
#   127.0.0.1:PORT/library/busybox:<tag>   and   127.0.0.1:PORT/library/pause:3.9
# (the library/ prefix is what containerd asks for when docker.io short names are mirrored here).
# Prints 127.0.0.1:PORT when ready. DIR/registry.pid, DIR/registry.log, DIR/config.yml.
#
# With --auth USER:PASSWORD the registry asks for HTTP basic authentication (htpasswd, bcrypt)
# and the images are pushed with those credentials.
#
# Usage: registry-up.sh DIR PORT [--images IMAGEDIR] [--auth USER:PASSWORD]
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 DIR PORT [--images IMAGEDIR] [--auth USER:PASSWORD]" >&2; exit 2; }
dir=$1
port=$2
shift 2
images=${NODEAGENT_IMAGE_DIR:-/var/tmp/nodeagent-images}
auth=
while [ $# -gt 0 ]; do
  case "$1" in
    --images) images=${2:?}; shift 2 ;;
    --auth) auth=${2:?}; shift 2 ;;
    *) echo "registry-up: unknown option $1" >&2; exit 2 ;;
  esac
done
for bin in docker-registry skopeo curl; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "registry-up: missing $bin; run: bash scripts/install-packages.sh" >&2
    exit 1
  fi
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$dir/data"
dir=$(cd "$dir" && pwd)
addr=127.0.0.1:$port
if [ -f "$dir/registry.pid" ] && kill -0 "$(cat "$dir/registry.pid")" 2>/dev/null; then
  echo "registry-up: a registry already runs for $dir" >&2
  exit 1
fi

bash "$here/build-images.sh" "$images" >/dev/null
# shellcheck source=/dev/null
. "$images/images.env"

cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: $addr
  secret: nodeagent-test-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
YAML
creds=()
if [ -n "$auth" ]; then
  command -v htpasswd >/dev/null 2>&1 || { echo "registry-up: missing htpasswd (apache2-utils); run: bash scripts/install-packages.sh" >&2; exit 1; }
  htpasswd -Bbn "${auth%%:*}" "${auth#*:}" >"$dir/htpasswd"
  cat >>"$dir/config.yml" <<YAML
auth:
  htpasswd:
    realm: nodeagent-test
    path: $dir/htpasswd
YAML
  creds=(--dest-creds "$auth")
fi

setsid docker-registry serve "$dir/config.yml" >>"$dir/registry.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/registry.pid"
ready=0
for _ in $(seq 1 200); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "registry-up: docker-registry exited; last lines of $dir/registry.log:" >&2
    tail -n 20 "$dir/registry.log" >&2
    exit 1
  fi
  # /v2/ answers 200, or 401 when authentication is on: either way the registry is up.
  code=$(curl -sS -o /dev/null -w '%{http_code}' "http://$addr/v2/" 2>/dev/null || true)
  if [ "$code" = 200 ] || [ "$code" = 401 ]; then ready=1; break; fi
  sleep 0.05
done
[ "$ready" -eq 1 ] || { echo "registry-up: http://$addr/v2/ did not answer within 10 s" >&2; exit 1; }

push() {
  skopeo --insecure-policy copy --quiet --dest-tls-verify=false ${creds[@]+"${creds[@]}"} \
    "oci:$images/$1:$2" "docker://$addr/library/$1:$2" >/dev/null
}
push busybox "$BUSYBOX_TAG"
push pause "$PAUSE_TAG"
echo "$addr"

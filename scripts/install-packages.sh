#!/usr/bin/env bash
# Installs from Debian's packages what nodeagent, its tests and its scripts need.
# Idempotent: packages already present are not fetched again. Needs root.
# chromium is for the web console's browser tests (driven by playwright-core, which never
# downloads a browser of its own).
set -euo pipefail

packages=(
  containerd runc containernetworking-plugins iptables skopeo docker-registry
  busybox-static etcd-server etcd-client util-linux curl ca-certificates apache2-utils
  python3 make g++ dbus
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-packages: all ${#packages[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-packages: missing ${missing[*]}; run as root to install them" >&2
  exit 1
fi
echo "install-packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-packages: done"

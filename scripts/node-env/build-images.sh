#!/usr/bin/env bash
# Builds, without any registry, two OCI image layouts from Debian's busybox-static:
#
#   OUTDIR/busybox/        OCI layout, tag <major.minor of busybox> (e.g. 1.35), command `sh`
#   OUTDIR/pause/          OCI layout, tag 3.9, entrypoint `/bin/sleep 2147483647`
#   OUTDIR/images.oci.tar  one OCI archive holding both, for `ctr images import`
#   OUTDIR/images.env      BUSYBOX_REF, PAUSE_REF, BUSYBOX_TAG, PAUSE_TAG, BUSYBOX_SHA256, ...
#
# Names inside containerd: docker.io/library/busybox:<tag> and docker.io/library/pause:3.9, so
# that the short names `busybox:<tag>` and `pause:3.9` resolve to them.
#
# Reproducible: the one layer (shared by both images) is a tar with sorted names, mtime 0 and
# owner 0:0, gzip without name or time; configs carry the epoch as their creation time. The
# same busybox binary always gives the same digests.
# Idempotent: when OUTDIR/images.env records the sha256 of the same busybox binary (and of this
# script), nothing is rebuilt. Concurrent callers serialise on OUTDIR/.lock.
#
# Usage: build-images.sh OUTDIR        (BUSYBOX=/path/to/busybox overrides /bin/busybox)
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
busybox_bin=${BUSYBOX:-/bin/busybox}
pause_tag=3.9

for tool in "$busybox_bin" tar gzip sha256sum flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-images: missing $tool; run: bash scripts/install-packages.sh" >&2
    exit 1
  fi
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
exec 9>"$out/.lock"
flock 9

bb_sha=$(sha256sum "$busybox_bin" | cut -d' ' -f1)
script_sha=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)
if [ -f "$out/images.env" ] && grep -qx "BUSYBOX_SHA256=$bb_sha" "$out/images.env" \
  && grep -qx "BUILD_SCRIPT_SHA256=$script_sha" "$out/images.env" \
  && [ -f "$out/images.oci.tar" ] && [ -f "$out/busybox/index.json" ] && [ -f "$out/pause/index.json" ]; then
  echo "build-images: cached in $out"
  exit 0
fi

# sed reads the whole help text: with `head -n1` busybox could die of SIGPIPE and, under pipefail,
# fail the script with exit code 141 and no message.
bb_version=$("$busybox_bin" 2>&1 | sed -n '1s/^BusyBox v\([0-9]*\.[0-9]*\).*/\1/p')
if [ -z "$bb_version" ]; then
  echo "build-images: cannot read the version of $busybox_bin" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  armv7l) arch=arm ;;
  *) arch=$(uname -m) ;;
esac

work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 022

# --- the root filesystem -------------------------------------------------------------------
rootfs=$work/rootfs
mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/root"
cp "$busybox_bin" "$rootfs/bin/busybox"
chmod 0755 "$rootfs/bin/busybox"
"$busybox_bin" --list | LC_ALL=C sort -u | while IFS= read -r applet; do
  [ -n "$applet" ] && [ "$applet" != busybox ] && ln -s busybox "$rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
: >"$rootfs/etc/hosts"
chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group" "$rootfs/etc/hosts"
chmod 0755 "$rootfs" "$rootfs/bin" "$rootfs/etc"
chmod 0700 "$rootfs/root"
chmod 1777 "$rootfs/tmp"

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$rootfs" -cf "$work/layer.tar" bin etc root tmp
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -9 -c "$work/layer.tar" >"$work/layer.tar.gz"

# --- blobs and layouts -----------------------------------------------------------------------
blobs=$work/blobs/sha256
mkdir -p "$blobs"

# put_blob FILE -> prints "DIGEST SIZE" and stores FILE under blobs/sha256/
put_blob() {
  local digest size
  digest=$(sha256sum "$1" | cut -d' ' -f1)
  size=$(stat -c %s "$1")
  cp "$1" "$blobs/$digest"
  echo "$digest $size"
}

read -r layer_digest layer_size < <(put_blob "$work/layer.tar.gz")
epoch=1970-01-01T00:00:00Z
path_env='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# image_manifest NAME TAG CONFIG_JSON_FRAGMENT -> prints "DIGEST SIZE" of the manifest
image_manifest() {
  local name=$1 tag=$2 exec_config=$3 cfg_digest cfg_size
  printf '{"architecture":"%s","config":{"Env":["%s"],%s,"WorkingDir":"/"},"created":"%s","history":[{"created":"%s","created_by":"nodeagent build-images.sh: %s from busybox %s"}],"os":"linux","rootfs":{"diff_ids":["sha256:%s"],"type":"layers"}}' \
    "$arch" "$path_env" "$exec_config" "$epoch" "$epoch" "$name" "$bb_version" "$diff_id" >"$work/$name.config.json"
  read -r cfg_digest cfg_size < <(put_blob "$work/$name.config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
    "$cfg_digest" "$cfg_size" "$layer_digest" "$layer_size" >"$work/$name.manifest.json"
  put_blob "$work/$name.manifest.json"
}

# descriptor DIGEST SIZE NAME TAG -> the index entry of one image
descriptor() {
  printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"docker.io/library/%s:%s","org.opencontainers.image.ref.name":"%s"},"platform":{"architecture":"%s","os":"linux"}}' \
    "$1" "$2" "$3" "$4" "$4" "$arch"
}

read -r bb_digest bb_size < <(image_manifest busybox "$bb_version" '"Cmd":["sh"]')
read -r pause_digest pause_size < <(image_manifest pause "$pause_tag" '"Entrypoint":["/bin/sleep","2147483647"]')
bb_desc=$(descriptor "$bb_digest" "$bb_size" busybox "$bb_version")
pause_desc=$(descriptor "$pause_digest" "$pause_size" pause "$pause_tag")

# write_layout DIR DESCRIPTORS BLOB... : one OCI layout holding the given blobs
write_layout() {
  local dir=$1 descs=$2
  shift 2
  mkdir -p "$dir/blobs/sha256"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "$descs" >"$dir/index.json"
  for b in "$@"; do cp "$blobs/$b" "$dir/blobs/sha256/$b"; done
}
cfg_of() { sed -n 's/.*"config":{[^}]*"digest":"sha256:\([0-9a-f]*\)".*/\1/p' "$work/$1.manifest.json"; }
bb_cfg=$(cfg_of busybox)
pause_cfg=$(cfg_of pause)
write_layout "$work/out/busybox" "$bb_desc" "$bb_digest" "$bb_cfg" "$layer_digest"
write_layout "$work/out/pause" "$pause_desc" "$pause_digest" "$pause_cfg" "$layer_digest"
write_layout "$work/all" "$bb_desc,$pause_desc" "$bb_digest" "$bb_cfg" "$pause_digest" "$pause_cfg" "$layer_digest"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$work/all" -cf "$work/out/images.oci.tar" oci-layout index.json blobs

cat >"$work/out/images.env" <<ENV
BUSYBOX_SHA256=$bb_sha
BUILD_SCRIPT_SHA256=$script_sha
BUSYBOX_VERSION=$bb_version
BUSYBOX_TAG=$bb_version
BUSYBOX_REF=docker.io/library/busybox:$bb_version
BUSYBOX_MANIFEST=sha256:$bb_digest
BUSYBOX_IMAGE_ID=sha256:$bb_cfg
PAUSE_TAG=$pause_tag
PAUSE_REF=docker.io/library/pause:$pause_tag
PAUSE_MANIFEST=sha256:$pause_digest
PAUSE_IMAGE_ID=sha256:$pause_cfg
LAYER_DIGEST=sha256:$layer_digest
ENV

# Replace the previous build; images.env goes last so that a reader never sees it half done.
rm -f "$out/images.env"
rm -rf "$out/busybox" "$out/pause" "$out/images.oci.tar"
mv "$work/out/busybox" "$work/out/pause" "$work/out/images.oci.tar" "$out/"
mv "$work/out/images.env" "$out/images.env"
echo "build-images: busybox $bb_version and pause $pause_tag in $out"

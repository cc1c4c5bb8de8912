#!/usr/bin/env bash
# Stops the containerd that containerd-up.sh started for DIR and removes what it left on the
# host: its containers and shims, the mounts under DIR, the CNI bridge, the iptables rules of
# its CNI network, and the cgroup tree CGROUP_ROOT (/nodeagent-<id>).
# Idempotent: running it twice, or on a DIR whose containerd already died, is fine.
#
# Usage: containerd-down.sh DIR [--purge]      (--purge also removes DIR)
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 DIR [--purge]" >&2; exit 2; }
dir=$1
purge=0
[ "${2:-}" = --purge ] && purge=1
if [ ! -d "$dir" ]; then
  exit 0
fi
dir=$(cd "$dir" && pwd)
sock=$dir/containerd.sock
id=$(printf '%s' "$dir" | sha256sum | cut -c1-8)
bridge=na-$id
network=nodeagent-$id
cgroup_root=/nodeagent-$id

pid=''
[ -f "$dir/containerd.pid" ] && pid=$(cat "$dir/containerd.pid")
alive() { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# 1. While containerd still answers, kill and delete every task: the shims then exit cleanly.
if alive && [ -S "$sock" ] && timeout 5 ctr -a "$sock" version >/dev/null 2>&1; then
  for ns in $(timeout 5 ctr -a "$sock" namespaces ls -q 2>/dev/null); do
    for task in $(timeout 5 ctr -a "$sock" -n "$ns" tasks ls -q 2>/dev/null); do
      timeout 10 ctr -a "$sock" -n "$ns" tasks delete --force "$task" >/dev/null 2>&1 ||
        echo "containerd-down: could not delete task $task ($ns); runc will" >&2
    done
  done
fi

# 2. containerd itself: TERM, then KILL after 10 s.
if alive; then
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 200); do alive || break; sleep 0.05; done
  if alive; then
    echo "containerd-down: containerd $pid ignored SIGTERM; killing it" >&2
    kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 100); do alive || break; sleep 0.05; done
  fi
fi

# 3. Whatever is still running under this instance's runc root, and shims still serving it.
for root in "$dir"/runc/*/; do
  [ -d "$root" ] || continue
  for c in $(runc --root "$root" list -q 2>/dev/null); do
    runc --root "$root" delete --force "$c" >/dev/null 2>&1 || echo "containerd-down: runc delete $c failed" >&2
  done
done
# A shim's socket is /run/containerd/s/<sha256 of "<containerd socket>/<namespace>/<id>">;
# killed shims leave it behind.
shims=()
shim_sockets=()
for f in $(grep -lsaF -- "$sock" /proc/[0-9]*/cmdline 2>/dev/null); do
  p=${f#/proc/}
  p=${p%/cmdline}
  mapfile -d '' -t argv <"$f" 2>/dev/null || continue
  case "${argv[0]:-}" in *containerd-shim*) ;; *) continue ;; esac
  ns='' sid='' addr=''
  for ((i = 1; i < ${#argv[@]} - 1; i++)); do
    case "${argv[$i]}" in
      -namespace) ns=${argv[$((i + 1))]} ;;
      -id) sid=${argv[$((i + 1))]} ;;
      -address) addr=${argv[$((i + 1))]} ;;
    esac
  done
  [ "$addr" = "$sock" ] || continue
  shims+=("$p")
  if [ -n "$ns" ] && [ -n "$sid" ]; then
    shim_sockets+=("/run/containerd/s/$(printf '%s' "$sock/$ns/$sid" | sha256sum | cut -d' ' -f1)")
  fi
done
if [ ${#shims[@]} -gt 0 ]; then
  echo "containerd-down: killing shims left behind: ${shims[*]}" >&2
  kill -KILL "${shims[@]}" 2>/dev/null
  for p in "${shims[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
  done
  rm -f "${shim_sockets[@]}"
fi

# 4. Mounts under DIR (rootfs overlays, sandbox shm, network namespaces), deepest first.
awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "containerd-down: cannot unmount $m" >&2
done

# 5. The bridge and the NAT rules of this CNI network (chains CNI-xxx / CNI-DN-xxx it owns).
if ip link show "$bridge" >/dev/null 2>&1; then
  ip link delete "$bridge" 2>/dev/null || echo "containerd-down: cannot delete bridge $bridge" >&2
fi
if command -v iptables >/dev/null 2>&1; then
  rules=$(iptables -w -t nat -S 2>/dev/null | grep -F "name: \\\"$network\\\"" || true)
  chains=$(grep -o -- '-j CNI-[A-Za-z0-9-]*' <<<"$rules" | cut -d' ' -f2 | sort -u | grep -v '^CNI-HOSTPORT' || true)
  while IFS= read -r rule; do
    [ -n "$rule" ] || continue
    eval "iptables -w -t nat ${rule/-A /-D }" 2>/dev/null || true
  done <<<"$rules"
  for c in $chains; do
    iptables -w -t nat -F "$c" 2>/dev/null && iptables -w -t nat -X "$c" 2>/dev/null || true
  done
fi

# libcni's cache of results of pods that were never torn down through CNI DEL:
# <network>-<sandbox id>-<ifname>, and cni-loopback-<sandbox id>-lo for containerd's loopback.
cni_cache=/var/lib/cni/results
for f in "$cni_cache/$network"-*; do
  [ -e "$f" ] || continue
  rest=${f##*/}
  rest=${rest#"$network-"}
  rm -f "$f" "$cni_cache/cni-loopback-${rest%-*}-lo"
done

# 6. The pods' cgroups: runc removes each container's own cgroup, not the pod<uid> parents.
for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
  top=${h%/}$cgroup_root
  [ -d "$top" ] || continue
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    find "$top" -depth -type d -exec rmdir {} + 2>/dev/null
    [ -d "$top" ] || break
    sleep 0.1
  done
  [ -d "$top" ] && echo "containerd-down: cannot remove cgroup $top" >&2
done

rm -f "$dir/containerd.pid"
if [ "$purge" -eq 1 ]; then
  if awk -v d="$dir/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "containerd-down: mounts remain under $dir; not removing it" >&2
    exit 1
  fi
  rm -rf "$dir"
fi
exit 0

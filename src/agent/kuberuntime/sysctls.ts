/**
 * Pod sysctls at admission (upstream: pkg/kubelet/sysctl, the pattern allowlist admit handler).
 * A pod may set the safe sysctls always, and the others only when they match
 * allowedUnsafeSysctls (a name, or a prefix ending in `*`); only namespaced sysctls can be
 * allowed at all (IPC: kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*; network: net.*), and
 * a namespaced sysctl is refused when the pod shares that namespace with the host
 * (hostIPC, hostNetwork). Names with `/` separators are read in their dotted form.
 *
 *   | pod asks for                                   | decision                                     |
 *   |------------------------------------------------|----------------------------------------------|
 *   | a safe sysctl, or one matching the allowlist   | admitted (unless its namespace is the host's) |
 *   | anything else                                  | SysctlForbidden: forbidden sysctl: "x" not    |
 *   |                                                | allowlisted                                  |
 *   | a net.* sysctl with hostNetwork (kernel.shm*   | SysctlForbidden: forbidden sysctl: "x" not    |
 *   | ... with hostIPC)                              | allowed with host net enabled                |
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { sysctlName } from './sandbox-config.js';
import { quoteValue } from '../../api/quote.js';

/**
 * upstream's safe set: namespaced and isolated from the node and other pods. The last seven
 * came with later releases (ip_local_reserved_ports 1.27, the TCP keepalive and fin timeout
 * ones 1.29, tcp_rmem/tcp_wmem 1.32); all of them exist on the kernels this agent supports.
 */
export const SAFE_SYSCTLS: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];

export type SysctlNamespace = 'ipc' | 'net';

/** The namespace a sysctl (or a prefix of sysctls) belongs to; undefined when it is not namespaced. */
export function sysctlNamespace(name: string): SysctlNamespace | undefined {
  const n = sysctlName(name);
  if (n.startsWith('net.')) return 'net';
  if (n === 'kernel.sem' || n.startsWith('kernel.shm') || n.startsWith('kernel.msg') || n.startsWith('fs.mqueue.')) return 'ipc';
  return undefined;
}

export interface SysctlAdmitResult {
  readonly admit: boolean;
  /** 'SysctlForbidden' when refused. */
  readonly reason?: 'SysctlForbidden';
  readonly message?: string;
}

interface Allowlist {
  readonly names: Map<string, SysctlNamespace>;
  readonly prefixes: Map<string, SysctlNamespace>;
}

function allowlist(allowedUnsafeSysctls: readonly string[]): Allowlist {
  const names = new Map<string, SysctlNamespace>();
  const prefixes = new Map<string, SysctlNamespace>();
  for (const raw of [...SAFE_SYSCTLS, ...allowedUnsafeSysctls]) {
    const pattern = sysctlName(raw);
    const ns = sysctlNamespace(pattern.endsWith('*') ? pattern.slice(0, -1) : pattern);
    if (ns === undefined) continue; // not namespaced: it can never be allowed for a pod (the configuration's validation reports it)
    if (pattern.endsWith('*')) prefixes.set(pattern.slice(0, -1), ns);
    else names.set(pattern, ns);
  }
  return { names, prefixes };
}

function check(list: Allowlist, raw: string, hostNetwork: boolean, hostIPC: boolean): string | undefined {
  const name = sysctlName(raw);
  let ns = list.names.get(name);
  if (ns === undefined) {
    for (const [prefix, prefixNs] of list.prefixes) {
      if (name.startsWith(prefix)) {
        ns = prefixNs;
        break;
      }
    }
  }
  if (ns === undefined) return `${quoteValue(name)} not allowlisted`;
  if (ns === 'ipc' && hostIPC) return `${quoteValue(name)} not allowed with host ipc enabled`;
  if (ns === 'net' && hostNetwork) return `${quoteValue(name)} not allowed with host net enabled`;
  return undefined;
}

/** The admission decision on a pod's sysctls (for the sync loop's admission). Pure. */
export function sysctlAdmission(pod: Pod, allowedUnsafeSysctls: readonly string[]): SysctlAdmitResult {
  const sysctls = pod.spec?.securityContext?.sysctls ?? [];
  if (sysctls.length === 0) return { admit: true };
  const list = allowlist(allowedUnsafeSysctls);
  for (const s of sysctls) {
    const problem = check(list, s.name, pod.spec?.hostNetwork === true, pod.spec?.hostIPC === true);
    if (problem !== undefined) return { admit: false, reason: 'SysctlForbidden', message: `forbidden sysctl: ${problem}` };
  }
  return { admit: true };
}

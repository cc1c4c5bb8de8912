/**
 * The pod's managed /etc/hosts (`<rootDir>/pods/<uid>/etc-hosts`), written once the pod IPs are
 * known and rewritten when they change. The file is rewritten in place (same inode), never
 * replaced by a rename: containers bind-mount the inode, and a rename would leave them the old one.
 *
 * Host-network pods get no managed file: they see the node's /etc/hosts as the runtime gives it,
 * without their hostAliases (upstream copies the node's file and appends them).
 */
import { writeFileSync } from 'node:fs';
import type { NodePod } from '../../api/pod/index.js';

import { OrchError } from '../../api/errors.js';
import { validateDNS1123Label } from '../../api/labels.js';
import { etcHostsPath, podUIDOf } from './paths.js';
import { VOLUME_INVALID } from './types.js';
import { quoteValue } from '../../api/quote.js';

const HOSTNAME_MAX = 63;

export interface PodHostname {
  readonly hostname: string;
  /** `<subdomain>.<namespace>.svc.<clusterDomain>`, or '' without a subdomain. */
  readonly domain: string;
}

/**
 * The pod's hostname (spec.hostname, else the pod name, cut to 63 characters without a trailing
 * `-` or `.`) and domain, as upstream. Throws `VOLUME_INVALID` for a hostname or subdomain that
 * is not a DNS label. With an empty clusterDomain the domain ends in `.svc` (no trailing dot).
 */
export function podHostname(pod: NodePod, clusterDomain: string): PodHostname {
  let hostname = pod.metadata.name;
  const spec = pod.spec;
  for (const [field, value] of [['spec.hostname', spec?.hostname], ['spec.subdomain', spec?.subdomain]] as const) {
    if (value === undefined || value === '') continue;
    const problems = validateDNS1123Label(value);
    if (problems.length > 0) {
      throw new OrchError(VOLUME_INVALID, 'invalid', `${field} ${quoteValue(value)} is not a valid DNS label: ${problems.join('; ')}`, { subject: field });
    }
  }
  if (spec?.hostname !== undefined && spec.hostname !== '') hostname = spec.hostname;
  if (hostname.length > HOSTNAME_MAX) hostname = hostname.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, '');
  if (hostname === '') throw new OrchError(VOLUME_INVALID, 'invalid', 'the pod has no name to use as its hostname', { subject: 'metadata.name' });
  const subdomain = spec?.subdomain ?? '';
  const namespace = pod.metadata.namespace;
  const domain = subdomain === '' ? '' : [subdomain, namespace, 'svc', clusterDomain].filter((p) => p !== '').join('.');
  return { hostname, domain };
}

/** The managed hosts file's text for a pod that is not on the host network. */
export function etcHostsContent(pod: NodePod, podIPs: readonly string[], clusterDomain: string): string {
  const { hostname, domain } = podHostname(pod, clusterDomain);
  const lines = [
    '# Orch-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
  ];
  for (const ip of podIPs) lines.push(domain === '' ? `${ip}\t${hostname}` : `${ip}\t${hostname}.${domain}\t${hostname}`);
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length > 0) {
    lines.push('', '# Entries added by HostAliases.');
    for (const alias of aliases) lines.push(`${alias.ip ?? ''}\t${(alias.hostnames ?? []).join('\t')}`);
  }
  return lines.join('\n') + '\n';
}

export interface WriteEtcHostsOptions {
  readonly rootDir: string;
  readonly pod: NodePod;
  readonly podIPs: readonly string[];
  readonly clusterDomain: string;
}

/**
 * (Re)writes the pod's etc-hosts file (mode 0644) and returns its path, or returns undefined
 * for a host-network pod. Idempotent. The pod directory must exist (preparePodVolumes makes it).
 * Throws `VOLUME_INVALID` (bad UID, hostname or subdomain) or the write's error.
 */
export function writeEtcHosts(options: WriteEtcHostsOptions): string | undefined {
  const { pod } = options;
  if (pod.spec?.hostNetwork === true) return undefined;
  const path = etcHostsPath(options.rootDir, podUIDOf(pod));
  // Synchronous: a small local file on the start path (no wait behind other file work in libuv's pool).
  writeFileSync(path, etcHostsContent(pod, options.podIPs, options.clusterDomain), { mode: 0o644 });
  return path;
}

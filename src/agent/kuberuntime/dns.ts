/**
 * A pod's DNS configuration (the resolv.conf the runtime writes into the sandbox), as
 * upstream's dns.Configurer builds it from the pod's dnsPolicy and dnsConfig, the agent's
 * clusterDNS, clusterDomain and resolvConf settings, and the node's resolv.conf:
 *
 *   | policy                        | servers             | searches                          | options       |
 *   |-------------------------------|---------------------|-----------------------------------|---------------|
 *   | ClusterFirst (not host net)   | clusterDNS          | ns.svc.D svc.D D + host searches  | ndots:5       |
 *   | ClusterFirstWithHostNet       | (same)              | (same)                            | (same)        |
 *   | ClusterFirst on host network  | as Default          |                                   |               |
 *   | Default                       | host's              | host's                            | host's        |
 *   | None                          | none                | none                              | none          |
 *
 * then pod.spec.dnsConfig is appended (duplicates dropped, its options override), and the
 * limits applied: 3 nameservers, 32 search domains of at most 253 characters, 2048
 * characters in all. A ClusterFirst pod on an agent without clusterDNS falls back to Default
 * (with a warning). With resolvConf '' the host part is "no DNS": nameserver 127.0.0.1 (::1
 * for an IPv6 node) and search "." as upstream.
 */
import type { Pod, PodDNSConfigOption } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { readFileSync } from 'node:fs';
import type { DnsConfig } from '../runtime/cri/index.js';

export interface DnsSettings {
  /** IPs of the cluster's DNS service (--cluster-dns); empty: none. */
  readonly clusterDNS: readonly string[];
  /** The cluster's domain (--cluster-domain), e.g. cluster.local; empty: none. */
  readonly clusterDomain: string;
  /** The resolv.conf the Default policy copies (--resolv-conf); '' for none. */
  readonly resolvConf: string;
}

export interface HostDns {
  readonly servers: readonly string[];
  readonly searches: readonly string[];
  readonly options: readonly string[];
}

export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const MAX_SEARCH_DOMAIN_LENGTH = 253;
const CLUSTER_OPTIONS = ['ndots:5'];

/** Options by name, later ones replacing earlier ones of the same name in place. */
function appendOptions(options: readonly string[], more: readonly string[]): string[] {
  const byName = new Map<string, string>();
  for (const option of [...options, ...more]) byName.set(option.split(':', 1)[0] ?? option, option);
  return [...byName.values()];
}

/** nameserver, search and options lines of a resolv.conf, as upstream's parseResolvConf reads them. */
export function parseResolvConf(text: string): HostDns {
  let servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const fields = line.trim().split(/\s+/).filter((f) => f !== '');
    const [keyword, ...rest] = fields;
    if (keyword === 'nameserver' && rest[0] !== undefined) servers = [...servers, rest[0]];
    else if (keyword === 'search') searches = rest.filter((s) => s !== '.').map((s) => s.replace(/\.$/, ''));
    else if (keyword === 'options') options = appendOptions(options, rest);
  }
  return { servers, searches, options };
}

/**
 * The node's DNS configuration: resolvConf parsed, or undefined when resolvConf is ''. Throws
 * when the file cannot be read. A synchronous read of a small local file: it is on the start
 * path of every pod, where a round trip through libuv's thread pool waits behind other file work.
 */
export function readHostDns(resolvConf: string): HostDns | undefined {
  if (resolvConf === '') return undefined;
  return parseResolvConf(readFileSync(resolvConf, 'utf8'));
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}

/** The pod's options merged over `base` (upstream: mergeDNSOptions, in a stable order). */
function mergeOptions(base: readonly string[], pod: readonly PodDNSConfigOption[]): string[] {
  const byName = new Map<string, string>();
  for (const option of base) {
    const colon = option.indexOf(':');
    if (colon < 0) byName.set(option, '');
    else byName.set(option.slice(0, colon), option.slice(colon + 1));
  }
  for (const option of pod) byName.set(option.name ?? '', option.value ?? '');
  return [...byName].map(([name, value]) => (value === '' ? name : `${name}:${value}`));
}

/** The search list cut to upstream's limits; `cut` tells whether anything was dropped. */
export function fitSearches(searches: readonly string[]): { searches: string[]; cut: boolean } {
  let cut = searches.length > MAX_DNS_SEARCH_PATHS;
  let kept = searches.slice(0, MAX_DNS_SEARCH_PATHS).filter((s) => {
    const ok = s.length <= MAX_SEARCH_DOMAIN_LENGTH;
    if (!ok) cut = true;
    return ok;
  });
  let length = kept.join(' ').length;
  while (length > MAX_DNS_SEARCH_LIST_CHARS && kept.length > 0) {
    length -= (kept[kept.length - 1]?.length ?? 0) + 1;
    kept = kept.slice(0, -1);
    cut = true;
  }
  return { searches: kept, cut };
}

export type PodDnsType = 'cluster' | 'host' | 'none';

/** Which base a pod's dnsPolicy selects (upstream: getPodDNSType); '' and unknown policies count as ClusterFirst. */
export function podDnsType(pod: Pod): PodDnsType {
  switch (pod.spec?.dnsPolicy) {
    case 'None':
      return 'none';
    case 'Default':
      return 'host';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    default:
      return pod.spec?.hostNetwork === true ? 'host' : 'cluster';
  }
}

/** What upstream records as a Warning event on the pod when it forms the pod's DNS (upstream's wording). */
export interface DnsWarning {
  /** MissingClusterDNS: ClusterFirst without clusterDNS fell back to Default; DNSConfigForming: a limit cut the configuration. */
  readonly reason: 'MissingClusterDNS' | 'DNSConfigForming';
  readonly message: string;
}

/** The node-wide half of MissingClusterDNS (upstream records it on the Node; here it is logged once per start). */
export const MISSING_CLUSTER_DNS = 'nodeagent does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';

export interface PodDnsResult {
  readonly config: DnsConfig;
  /** Things to record (a fallback, limits exceeded). */
  readonly warnings: readonly DnsWarning[];
}

/**
 * The pod's DNS configuration. `host` is the node's resolv.conf (undefined when resolvConf is
 * ''); `nodeIPs` choose 127.0.0.1 or ::1 when there is none.
 */
export function podDnsConfig(pod: NodePod, settings: DnsSettings, host: HostDns | undefined, nodeIPs: readonly string[]): PodDnsResult {
  const warnings: DnsWarning[] = [];
  let type = podDnsType(pod);
  if (type === 'cluster' && settings.clusterDNS.length === 0) {
    const { uid, name, namespace } = pod.metadata;
    warnings.push({ reason: 'MissingClusterDNS', message: `pod: "${name}_${namespace}(${uid})". ${MISSING_CLUSTER_DNS}` });
    type = 'host';
  }
  let servers: string[] = [...(host?.servers ?? [])];
  let searches: string[] = [...(host?.searches ?? [])];
  let options: string[] = [...(host?.options ?? [])];
  if (type === 'none') {
    servers = [];
    searches = [];
    options = [];
  } else if (type === 'cluster') {
    servers = [...settings.clusterDNS];
    const domain = settings.clusterDomain;
    if (domain !== '') {
      searches = unique([`${pod.metadata.namespace}.svc.${domain}`, `svc.${domain}`, domain, ...searches]);
    }
    options = [...CLUSTER_OPTIONS];
  } else if (host === undefined) {
    servers = nodeIPs.map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1'));
    if (servers.length === 0) servers = ['127.0.0.1'];
    servers = unique(servers);
    searches = ['.'];
  }
  const podConfig = pod.spec?.dnsConfig;
  if (podConfig !== undefined) {
    servers = unique([...servers, ...(podConfig.nameservers ?? [])]);
    searches = unique([...searches, ...(podConfig.searches ?? [])]);
    options = mergeOptions(options, podConfig.options ?? []);
  }
  if (servers.length > MAX_DNS_NAMESERVERS) {
    servers = servers.slice(0, MAX_DNS_NAMESERVERS);
    warnings.push({ reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}` });
  }
  const fitted = fitSearches(searches);
  if (fitted.cut) {
    warnings.push({ reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${fitted.searches.join(' ')}` });
  }
  return { config: { servers, searches: fitted.searches, options }, warnings };
}

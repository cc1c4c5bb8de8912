/**
 * The node's identity as the agent sees it: its name (the hostname, or --hostname-override,
 * lowercased as upstream does) and its IPs (--node-ip, or the addresses of the interfaces of
 * the default IPv4 and IPv6 routes).
 *
 * Owns: reading /proc/net/route, /proc/net/ipv6_route and the interfaces. Must not: register
 * the node or write anything.
 */
import { readFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { OrchError } from '../../api/errors.js';
import { validateDNS1123Subdomain } from '../../api/labels.js';
import { quoteValue } from '../../api/quote.js';

/** The node name: the override when given, else the hostname; trimmed and lowercased. */
export function nodeName(hostnameOverride: string, host: () => string = hostname): string {
  const name = (hostnameOverride.trim() === '' ? host() : hostnameOverride).trim().toLowerCase();
  const problems = validateDNS1123Subdomain(name);
  if (problems.length > 0) {
    throw new OrchError('NODE_NAME_INVALID', 'invalid', `node name ${quoteValue(name)} is not valid: ${problems.join('; ')}; set --hostname-override`, {
      subject: '--hostname-override',
    });
  }
  return name;
}

async function defaultRouteInterface(path: string, family: 4 | 6): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined; // no such routing table (e.g. IPv6 disabled): no default route of that family
  }
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (family === 4 && f[1] === '00000000' && f[7] === '00000000') return f[0];
    if (family === 6 && f[0] === '00000000000000000000000000000000' && f[1] === '00' && f[9] !== 'lo') return f[9];
  }
  return undefined;
}

export interface NodeIPOptions {
  /** --node-ip: '' or one or two comma-separated IPs. */
  readonly nodeIP: string;
  readonly procNet?: string;
}

/**
 * The node's IPs, primary first: --node-ip when given; else the IPv4 address of the default
 * route's interface, then the IPv6 one; else the first non-internal IPv4; else 127.0.0.1.
 * ('::' as --node-ip prefers IPv6.)
 */
export async function nodeIPs(options: NodeIPOptions): Promise<string[]> {
  const given = options.nodeIP.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (given.length > 0 && !(given.length === 1 && (given[0] === '::' || given[0] === '0.0.0.0'))) return given;
  const procNet = options.procNet ?? '/proc/net';
  const ifaces = networkInterfaces();
  const out: string[] = [];
  const v4 = await defaultRouteInterface(`${procNet}/route`, 4);
  const v6 = await defaultRouteInterface(`${procNet}/ipv6_route`, 6);
  const addr4 = v4 === undefined ? undefined : ifaces[v4]?.find((a) => a.family === 'IPv4')?.address;
  const addr6 = v6 === undefined ? undefined : ifaces[v6]?.find((a) => a.family === 'IPv6' && !a.address.startsWith('fe80'))?.address;
  if (addr4 !== undefined) out.push(addr4);
  if (addr6 !== undefined) out.push(addr6);
  if (given[0] === '::') out.reverse();
  if (out.length === 0) {
    const any = Object.values(ifaces).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    out.push(any?.address ?? '127.0.0.1');
  }
  return out;
}

/**
 * Validation of the structured values inside the configuration: eviction thresholds,
 * reserved resources, sysctl patterns, CPU sets, addresses, endpoints, TLS names, taints
 * and node labels. Each function returns messages (empty when valid); validate.ts attaches
 * the field names.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { parseDuration } from '../../api/duration.js';
import { messageOf } from '../../api/errors.js';
import { validateLabelValue, validateQualifiedName } from '../../api/labels.js';
import { parseQuantity } from '../../api/quantity.js';
import { validateTaint, type Taint } from '../../api/taints.js';
import { quoteValue } from '../../api/quote.js';

export const EVICTION_SIGNALS = [
  'memory.available', 'allocatableMemory.available', 'nodefs.available', 'nodefs.inodesFree',
  'imagefs.available', 'imagefs.inodesFree', 'pid.available',
] as const;

function quantityProblem(text: string): string | undefined {
  try {
    const q = parseQuantity(text);
    if (q.mantissa < 0n) return `${quoteValue(text)} must not be negative`;
    return undefined;
  } catch (err) {
    return messageOf(err);
  }
}

/** A threshold: a quantity, or a percentage from 0% to 100%. */
export function thresholdProblem(signal: string, value: string): string | undefined {
  if (!(EVICTION_SIGNALS as readonly string[]).includes(signal)) {
    return `unknown eviction signal ${quoteValue(signal)}; allowed: ${EVICTION_SIGNALS.join(', ')}`;
  }
  if (value.endsWith('%')) {
    const n = Number(value.slice(0, -1));
    if (value.length === 1 || !Number.isFinite(n) || n < 0 || n > 100) {
      return `threshold ${quoteValue(value)} of ${signal} must be a percentage from 0% to 100%`;
    }
    return undefined;
  }
  if (value === '') return `threshold of ${signal} is empty; give a quantity such as 100Mi or a percentage such as 10%`;
  const q = quantityProblem(value);
  return q === undefined ? undefined : `threshold of ${signal}: ${q}`;
}

/** A hard or soft threshold: as thresholdProblem, and a quantity must be above zero (upstream refuses 0 at start). */
export function evictionThresholdProblem(signal: string, value: string): string | undefined {
  const p = thresholdProblem(signal, value);
  if (p !== undefined || value.endsWith('%')) return p;
  return parseQuantity(value).mantissa === 0n ? `threshold of ${signal}: ${JSON.stringify(value)} must be positive` : undefined;
}

/** A minimum reclaim: as thresholdProblem, and a percentage must be above 0%. */
export function minimumReclaimProblem(signal: string, value: string): string | undefined {
  const p = thresholdProblem(signal, value);
  if (p !== undefined) return p.replace('threshold', 'minimum reclaim');
  return value.endsWith('%') && Number(value.slice(0, -1)) === 0 ? `minimum reclaim of ${signal}: ${JSON.stringify(value)} must be above 0%` : undefined;
}

export function gracePeriodProblem(signal: string, value: string): string | undefined {
  try {
    if (parseDuration(value) < 0) return `grace period ${quoteValue(value)} of ${signal} must not be negative`;
    return undefined;
  } catch (err) {
    return `grace period of ${signal}: ${messageOf(err)}`;
  }
}

const RESERVED_NAMES = ['cpu', 'memory', 'ephemeral-storage', 'pid'];

export function reservedResourceProblems(map: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(map)) {
    if (!RESERVED_NAMES.includes(name) && !name.startsWith('hugepages-')) {
      out.push(`unknown resource ${quoteValue(name)}; allowed: ${RESERVED_NAMES.join(', ')}, hugepages-<size>`);
      continue;
    }
    const q = quantityProblem(value);
    if (q !== undefined) out.push(`${name}: ${q}`);
  }
  return out;
}

const SYSCTL = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;

export function sysctlPatternProblem(pattern: string): string | undefined {
  const name = pattern.endsWith('*') ? pattern.slice(0, -1).replace(/[./]$/, '') : pattern;
  if ((pattern.endsWith('*') && name === '') || SYSCTL.test(name)) return undefined;
  return `${quoteValue(pattern)} is not a sysctl name or a pattern ending in * (e.g. net.core.somaxconn, kernel.msg*)`;
}

/** A CPU list such as "0-3,7". */
export function cpuSetProblem(text: string): string | undefined {
  if (text === '') return undefined;
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (m === null || (m[2] !== undefined && Number(m[2]) < Number(m[1]))) {
      return `${quoteValue(text)} is not a CPU list; use numbers and ascending ranges such as 0-3,7`;
    }
  }
  return undefined;
}

export function ipProblem(text: string): string | undefined {
  return isIP(text) === 0 ? `${quoteValue(text)} is not an IPv4 or IPv6 address` : undefined;
}

export function cidrProblem(text: string): string | undefined {
  const [ip, bits, extra] = text.split('/');
  const family = isIP(ip ?? '');
  const n = Number(bits);
  if (extra !== undefined || family === 0 || bits === undefined || !/^\d+$/.test(bits) || n > (family === 4 ? 32 : 128)) {
    return `${quoteValue(text)} is not a CIDR such as 10.244.0.0/24 or fd00::/112`;
  }
  if (family === 6 && n < 112) return `${quoteValue(text)}: an IPv6 pod range may hold at most 65536 addresses (/112 or longer)`;
  return undefined;
}

/** unix:///path or an absolute path; npipe and tcp belong to the other platform family. */
export function endpointProblem(text: string): string | undefined {
  if (text.startsWith('unix://')) {
    return text.slice('unix://'.length).startsWith('/') ? undefined : `${quoteValue(text)}: the socket path must be absolute (unix:///run/containerd/containerd.sock)`;
  }
  if (text.startsWith('/')) return undefined;
  if (text.startsWith('npipe://') || text.startsWith('tcp://')) {
    return `${quoteValue(text)}: npipe and tcp endpoints are not supported on Linux; use unix:///<path>`;
  }
  return `${quoteValue(text)} is not an endpoint; use unix:///<path>`;
}

/** podLogsDir: an absolute, normalized path (upstream: `/var/log/pods`, not `/var/log/pods/` or `../pods`). */
export function podLogsDirProblems(dir: string): string[] {
  if (!path.isAbsolute(dir)) return [`pod logs path ${quoteValue(dir)} must be an absolute path`];
  const clean = path.normalize(dir).replace(/(.)\/+$/, '$1');
  return clean === dir ? [] : [`pod logs path ${quoteValue(dir)} must be normalized (${quoteValue(clean)})`];
}

export function urlProblem(text: string): string | undefined {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : `${quoteValue(text)} must be an http or https URL`;
  } catch {
    return `${quoteValue(text)} is not a URL`;
  }
}

export function taintProblems(taints: readonly { key: string; value: string; effect: string }[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    const taint = { key: t.key, effect: t.effect, ...(t.value === '' ? {} : { value: t.value }) } as Taint;
    for (const p of validateTaint(taint)) out.push(`[${i}]: ${p}`);
    const id = `${t.key}:${t.effect}`;
    if (seen.has(id)) out.push(`[${i}]: duplicate taint ${id}`);
    seen.add(id);
  });
  return out;
}

const ALLOWED_ORCH_LABELS = new Set([
  'beta.orch.io/arch', 'beta.orch.io/instance-type', 'beta.orch.io/os', 'failure-domain.beta.orch.io/region',
  'failure-domain.beta.orch.io/zone', 'orch.io/arch', 'orch.io/hostname', 'orch.io/os',
  'node.orch.io/instance-type', 'topology.orch.io/region', 'topology.orch.io/zone',
]);
const ALLOWED_ORCH_PREFIXES = ['nodeagent.orch.io', 'node.orch.io'];

function inNamespace(domain: string, ns: string): boolean {
  return domain === ns || domain.endsWith(`.${ns}`);
}

/** Labels for --node-labels: valid keys and values, and only the allowed orch.io ones. */
export function nodeLabelProblems(labels: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  const forbidden: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const p of validateQualifiedName(key)) out.push(`key ${quoteValue(key)}: ${p}`);
    for (const p of validateLabelValue(value)) out.push(`value of ${key}: ${p}`);
    const slash = key.indexOf('/');
    const domain = slash < 0 ? '' : key.slice(0, slash);
    if (inNamespace(domain, 'orch.io') && !ALLOWED_ORCH_LABELS.has(key) &&
      !ALLOWED_ORCH_PREFIXES.some((p) => inNamespace(domain, p))) {
      forbidden.push(key);
    }
  }
  if (forbidden.length > 0) {
    out.push(
      `labels in the orch.io namespace must begin with an allowed prefix (${ALLOWED_ORCH_PREFIXES.join(', ')}) ` +
        `or be in the allowed set (${[...ALLOWED_ORCH_LABELS].join(', ')}); not allowed: ${forbidden.join(', ')}`,
    );
  }
  return out;
}

/** TLS cipher suites by IANA name, with the OpenSSL name Node.js uses (null: TLS 1.3, fixed). */
export const SECURE_CIPHER_SUITES: ReadonlyMap<string, string | null> = new Map([
  ['TLS_AES_128_GCM_SHA256', null], ['TLS_AES_256_GCM_SHA384', null], ['TLS_CHACHA20_POLY1305_SHA256', null],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'ECDHE-ECDSA-AES128-SHA'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'ECDHE-ECDSA-AES128-GCM-SHA256'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'ECDHE-ECDSA-AES256-SHA'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'ECDHE-ECDSA-AES256-GCM-SHA384'],
  ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', 'ECDHE-ECDSA-CHACHA20-POLY1305'],
  ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305'],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'ECDHE-RSA-AES128-SHA'],
  ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256'],
  ['TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'ECDHE-RSA-AES256-SHA'],
  ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'],
  ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305'],
  ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-RSA-CHACHA20-POLY1305'],
  ['TLS_RSA_WITH_AES_128_CBC_SHA', 'AES128-SHA'], ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'AES128-GCM-SHA256'],
  ['TLS_RSA_WITH_AES_256_CBC_SHA', 'AES256-SHA'], ['TLS_RSA_WITH_AES_256_GCM_SHA384', 'AES256-GCM-SHA384'],
]);
export const INSECURE_CIPHER_SUITES: ReadonlyMap<string, string> = new Map([
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'ECDHE-ECDSA-AES128-SHA256'],
  ['TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', 'ECDHE-ECDSA-RC4-SHA'],
  ['TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', 'ECDHE-RSA-DES-CBC3-SHA'],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'ECDHE-RSA-AES128-SHA256'],
  ['TLS_ECDHE_RSA_WITH_RC4_128_SHA', 'ECDHE-RSA-RC4-SHA'],
  ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'DES-CBC3-SHA'],
  ['TLS_RSA_WITH_AES_128_CBC_SHA256', 'AES128-SHA256'],
  ['TLS_RSA_WITH_RC4_128_SHA', 'RC4-SHA'],
]);
export const TLS_VERSIONS = ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'] as const;

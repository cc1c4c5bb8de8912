/**
 * validatePod: every problem of a pod at creation, each as one line `field.path: message`,
 * accepting and rejecting what upstream's ValidatePodCreate does for the fields covered
 * here (metadata, pod-level policies, DNS, tolerations, containers, volumes), in messages
 * of our own. The pod is expected to be defaulted (applyPodDefaults) first: policies that
 * defaulting fills in (restartPolicy, dnsPolicy, imagePullPolicy, port protocols) are
 * required.
 */
import type { Pod, PodSpec, Toleration, Volume } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

import { validateDNS1123Subdomain, validateLabelValue, validateQualifiedName } from '../labels.js';
import { validateContainers } from './validation-containers.js';
import { validateEphemeralContainers } from './validation-ephemeral.js';
import { validateVolumes } from './validation-volumes.js';
import {
  Problems, checkDNSLabel, checkDNSSubdomain, checkEnum, checkIP, checkOptionalEnum, checkRange, quote,
} from './validation-util.js';

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
export const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] as const;
export const TOLERATION_OPERATORS = ['Exists', 'Equal'] as const;
export const TAINT_EFFECTS = ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
/** The total size of a pod's annotations (keys and values), in bytes. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCHES = 32;
export const MAX_DNS_SEARCH_CHARS = 2048;
const INT32_MAX = 2 ** 31 - 1;

function validateName(p: Problems, meta: ObjectMeta): void {
  const name = meta.name ?? '';
  const generateName = meta.generateName ?? '';
  if (name === '' && generateName === '') {
    p.add('metadata.name', 'is required (or metadata.generateName, a prefix for a generated name)');
  } else if (name !== '') {
    checkDNSSubdomain(p, 'metadata.name', name);
  } else {
    // A prefix may end with '-': check it as if a generated suffix followed.
    p.addEach('metadata.generateName', generateName, validateDNS1123Subdomain(generateName.replace(/-$/, '-a')));
  }
}

function validateMetadata(p: Problems, meta: ObjectMeta): void {
  validateName(p, meta);
  const namespace = meta.namespace ?? '';
  if (namespace === '') p.add('metadata.namespace', 'is required');
  else checkDNSLabel(p, 'metadata.namespace', namespace);
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    p.addEach('metadata.labels', key, validateQualifiedName(key).map((m) => `(a label key) ${m}`));
    p.addEach(`metadata.labels[${key}]`, value, validateLabelValue(value));
  }
  let bytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    p.addEach('metadata.annotations', key, validateQualifiedName(key.toLowerCase()).map((m) => `(an annotation key) ${m}`));
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES) {
    p.add('metadata.annotations', `take ${bytes} bytes in all (keys and values), more than the ${MAX_ANNOTATIONS_BYTES} allowed`);
  }
}

function validateDNS(p: Problems, spec: PodSpec): void {
  checkEnum(p, 'spec.dnsPolicy', spec.dnsPolicy, DNS_POLICIES);
  const config = spec.dnsConfig;
  const nameservers = config?.nameservers ?? [];
  if (spec.dnsPolicy === 'None' && nameservers.length === 0) {
    p.add('spec.dnsConfig.nameservers', 'must list at least one nameserver when dnsPolicy is None');
  }
  if (config === undefined) return;
  if (nameservers.length > MAX_DNS_NAMESERVERS) {
    p.add('spec.dnsConfig.nameservers', `has ${nameservers.length} entries, more than the ${MAX_DNS_NAMESERVERS} allowed`);
  }
  nameservers.forEach((ns, i) => {
    checkIP(p, `spec.dnsConfig.nameservers[${i}]`, ns);
  });
  const searches = config.searches ?? [];
  if (searches.length > MAX_DNS_SEARCHES) p.add('spec.dnsConfig.searches', `has ${searches.length} entries, more than the ${MAX_DNS_SEARCHES} allowed`);
  const chars = searches.join(' ').length;
  if (chars > MAX_DNS_SEARCH_CHARS) p.add('spec.dnsConfig.searches', `take ${chars} characters in all, more than the ${MAX_DNS_SEARCH_CHARS} allowed`);
  searches.forEach((s, i) => {
    // A search domain may end with '.' (fully qualified).
    const domain = s.endsWith('.') ? s.slice(0, -1) : s;
    p.addEach(`spec.dnsConfig.searches[${i}]`, s, validateDNS1123Subdomain(domain));
  });
  (config.options ?? []).forEach((o, i) => {
    if (o.name === undefined || o.name === '') p.add(`spec.dnsConfig.options[${i}].name`, 'is required');
  });
}

function validateToleration(p: Problems, path: string, t: Toleration): void {
  const key = t.key ?? '';
  const operator = t.operator === undefined || t.operator === '' ? 'Equal' : t.operator;
  if (key !== '') p.addEach(`${path}.key`, key, validateQualifiedName(key));
  else if (operator !== 'Exists') p.add(`${path}.operator`, `must be Exists when key is empty (it is ${operator})`);
  checkOptionalEnum(p, `${path}.operator`, t.operator === '' ? undefined : t.operator, TOLERATION_OPERATORS);
  const value = t.value ?? '';
  if (operator === 'Exists' && value !== '') p.add(`${path}.value`, `must be empty when operator is Exists (it is ${quote(value)})`);
  if (operator === 'Equal') p.addEach(`${path}.value`, value, validateLabelValue(value));
  checkOptionalEnum(p, `${path}.effect`, t.effect, TAINT_EFFECTS);
  if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
    p.add(`${path}.tolerationSeconds`, `may only be set when effect is NoExecute (it is ${quote(t.effect ?? '')})`);
  }
}

export interface PodValidationOptions {
  /**
   * The pod runs already (an update, or its ephemeralcontainers subresource): its ephemeral
   * containers are validated. Otherwise (a creation) it may not have any.
   */
  readonly existing?: boolean;
}

function validateSpec(p: Problems, spec: PodSpec, options: PodValidationOptions): void {
  const volumes: readonly Volume[] = spec.volumes ?? [];
  const volumeNames = validateVolumes(p, volumes);
  validateContainers(p, spec, volumeNames);
  if (options.existing === true) validateEphemeralContainers(p, spec, volumeNames);
  else if ((spec.ephemeralContainers ?? []).length > 0) {
    p.add('spec.ephemeralContainers', 'must be empty when a pod is created (ephemeral containers are added to a running pod)');
  }
  checkEnum(p, 'spec.restartPolicy', spec.restartPolicy, RESTART_POLICIES);
  validateDNS(p, spec);
  const grace = spec.terminationGracePeriodSeconds;
  if (grace !== undefined && grace < 0) p.add('spec.terminationGracePeriodSeconds', `${grace} must not be negative`);
  checkRange(p, 'spec.activeDeadlineSeconds', spec.activeDeadlineSeconds, 1, INT32_MAX);
  if (spec.hostname !== undefined && spec.hostname !== '') checkDNSLabel(p, 'spec.hostname', spec.hostname);
  if (spec.subdomain !== undefined && spec.subdomain !== '') checkDNSLabel(p, 'spec.subdomain', spec.subdomain);
  for (const field of ['nodeName', 'serviceAccountName', 'schedulerName', 'priorityClassName'] as const) {
    const value = spec[field];
    if (value !== undefined && value !== '') checkDNSSubdomain(p, `spec.${field}`, value);
  }
  for (const [key, value] of Object.entries(spec.nodeSelector ?? {})) {
    p.addEach('spec.nodeSelector', key, validateQualifiedName(key).map((m) => `(a label key) ${m}`));
    p.addEach(`spec.nodeSelector[${key}]`, value, validateLabelValue(value));
  }
  (spec.tolerations ?? []).forEach((t, i) => {
    validateToleration(p, `spec.tolerations[${i}]`, t);
  });
}

/**
 * Every problem of `pod` (empty when valid), in field order: metadata, volumes, containers,
 * then the pod-level fields. Never throws; does not change `pod`. `existing`: the pod runs
 * already (its ephemeral containers are validated instead of refused).
 */
export function validatePod(pod: Pod, options: PodValidationOptions = {}): string[] {
  const p = new Problems();
  validateMetadata(p, pod.metadata ?? {});
  if (pod.spec === undefined) p.add('spec', 'is required');
  else validateSpec(p, pod.spec, options);
  return p.lines;
}

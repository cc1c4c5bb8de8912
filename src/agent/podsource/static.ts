/**
 * What the agent does to a pod read from a file or a URL before it runs it, as upstream's
 * config sources do: defaults; a UID hashed from the content and the source (so that a
 * changed manifest is a new pod); the node name appended to the pod name; the default
 * namespace; the pod bound to this node; the source, hash and first-seen annotations; for
 * file pods, a toleration of every NoExecute taint; the Pending phase; then validation.
 */
import { createHash } from 'node:crypto';

import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';

import type { Clock } from '../../api/clock.js';
import {
  type NodePod, CONFIG_HASH_ANNOTATION, CONFIG_SEEN_ANNOTATION, CONFIG_SOURCE_ANNOTATION, FILE_SOURCE, HTTP_SOURCE, applyPodDefaults, validatePod,
} from '../../api/pod/index.js';
import { canonicalJSON } from './canonical-json.js';

/** Where a static pod was read from: a file (its full path) or a URL. */
export type StaticOrigin = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'http'; readonly url: string };

export interface StaticPodContext {
  readonly nodeName: string;
  readonly origin: StaticOrigin;
  /** The clock of the first-seen annotation. */
  readonly clock: Pick<Clock, 'now'>;
}

export type StaticPodResult = { readonly ok: true; readonly pod: NodePod } | { readonly ok: false; readonly problems: readonly string[] };

/** The toleration upstream gives file pods, so that node problems do not evict them. */
const TOLERATE_NO_EXECUTE: Toleration = { operator: 'Exists', effect: 'NoExecute' };

/**
 * The UID of a static pod without one: the MD5 (hex) of the defaulted pod's canonical JSON
 * followed, as upstream writes them, by `host:<node>` and `file:<path>` for a file, or by
 * `url:<url>` for a URL. Identical content from the same place gives the same UID.
 */
export function staticPodUID(defaulted: Pod, nodeName: string, origin: StaticOrigin): string {
  const hash = createHash('md5').update(canonicalJSON(defaulted));
  if (origin.kind === 'file') hash.update(`host:${nodeName}`).update(`file:${origin.path}`);
  else hash.update(`url:${origin.url}`);
  return hash.digest('hex');
}

/** A time as Go's RFC3339Nano prints it (UTC, fraction without trailing zeros). */
export function formatRFC3339(time: Date): string {
  return time.toISOString().replace(/\.?0+Z$/, 'Z');
}

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');
}

/**
 * Turns a decoded manifest pod into the pod the agent runs, or the problems that reject it
 * (a missing name, or any validation problem of the result). Never throws; `pod` is not
 * changed.
 */
export function prepareStaticPod(pod: Pod, context: StaticPodContext): StaticPodResult {
  const name = pod.metadata?.name ?? '';
  if (name === '') return { ok: false, problems: ['metadata.name: is required (a static pod needs a name; generateName is not used)'] };
  const defaulted = applyPodDefaults(pod);
  const { nodeName, origin } = context;
  const meta = defaulted.metadata ?? {};
  const uid = meta.uid !== undefined && meta.uid !== '' ? meta.uid : staticPodUID(defaulted, nodeName, origin);
  const spec = { ...(defaulted.spec ?? { containers: [] }), nodeName };
  if (origin.kind === 'file') {
    const tolerations = spec.tolerations ?? [];
    spec.tolerations = tolerations.some((t) => sameToleration(t, TOLERATE_NO_EXECUTE)) ? tolerations : [...tolerations, { ...TOLERATE_NO_EXECUTE }];
  }
  const result: NodePod = {
    ...defaulted,
    metadata: {
      ...meta,
      uid,
      name: `${name}-${nodeName.toLowerCase()}`,
      namespace: meta.namespace === undefined || meta.namespace === '' ? 'default' : meta.namespace,
      annotations: {
        ...meta.annotations,
        [CONFIG_HASH_ANNOTATION]: uid,
        [CONFIG_SOURCE_ANNOTATION]: origin.kind === 'file' ? FILE_SOURCE : HTTP_SOURCE,
        [CONFIG_SEEN_ANNOTATION]: formatRFC3339(new Date(context.clock.now())),
      },
    },
    spec,
    status: { ...defaulted.status, phase: 'Pending' },
  };
  const problems = validatePod(result);
  return problems.length === 0 ? { ok: true, pod: result } : { ok: false, problems };
}

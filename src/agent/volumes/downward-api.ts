/**
 * The files of downwardAPI volumes (and projected downwardAPI sources), from the pod itself:
 *
 * - fieldRef: metadata.name, metadata.namespace, metadata.uid, metadata.labels,
 *   metadata.annotations (one `key="value"` line per entry, sorted by key, values quoted as Go's
 *   %q, no final newline, as upstream's FormatMap), and metadata.labels['k'] /
 *   metadata.annotations['k'] (the value, or empty).
 * - resourceFieldRef: limits/requests of cpu, memory, ephemeral-storage and hugepages-*, of the
 *   named container, divided by the divisor (default 1) and rounded up; an unset limit is the
 *   node's allocatable (NodeCapacity), an unset request the limit given in the spec, else 0.
 */
import { Buffer } from 'node:buffer';
import type { DownwardAPIVolumeFile, ObjectFieldSelector, Pod, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { metadataFieldValue } from '../../api/pod/index.js';
import { quoteValue } from '../../api/quote.js';

export { formatMap, goQuote } from '../../api/pod/index.js';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import type { FileProjection } from './atomic-writer.js';
import { fileMode } from './payload.js';
import { VOLUME_INVALID, type NodeCapacity } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

function invalid(message: string, subject: string): OrchError {
  return new OrchError(VOLUME_INVALID, 'invalid', `${subject}: ${message}`, { subject });
}

const SUPPORTED_FIELDS = 'metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations, ' +
  "metadata.labels['<key>'] and metadata.annotations['<key>']";

/** The value of a fieldRef of a downwardAPI volume. Throws `VOLUME_INVALID` for another field path. */
export function volumeFieldValue(ref: ObjectFieldSelector, pod: NodePod, subject: string): string {
  const value = metadataFieldValue(pod.metadata, ref.fieldPath);
  if (value !== undefined) return value;
  throw invalid(`fieldPath ${quoteValue(ref.fieldPath)} is not supported in downwardAPI volumes (supported: ${SUPPORTED_FIELDS})`, `${subject}.fieldPath`);
}

function amount(text: string | undefined, fallback: number, milli: boolean, subject: string): number {
  if (text === undefined) return fallback;
  const q = parseQuantity(text, subject);
  return milli ? quantityMilliValue(q) : quantityValue(q);
}

/** The value of a resourceFieldRef of a downwardAPI volume (upstream: ExtractContainerResourceValue with limits defaulted to allocatable). */
export function volumeResourceValue(ref: ResourceFieldSelector, pod: Pod, capacity: NodeCapacity, subject: string): string {
  const containerName = ref.containerName ?? '';
  if (containerName === '') throw invalid('containerName is required in a downwardAPI volume', `${subject}.containerName`);
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const container = all.find((c) => c.name === containerName);
  if (container === undefined) throw invalid(`the pod has no container ${quoteValue(containerName)}`, `${subject}.containerName`);
  const dot = ref.resource.indexOf('.');
  const kind = ref.resource.slice(0, dot);
  const name = ref.resource.slice(dot + 1);
  const known = name === 'cpu' || name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-');
  if (dot < 0 || (kind !== 'limits' && kind !== 'requests') || !known) {
    throw invalid(`unsupported resource ${quoteValue(ref.resource)} (use limits.* or requests.* of cpu, memory, ephemeral-storage or hugepages-<size>)`, `${subject}.resource`);
  }
  const milli = name === 'cpu';
  const unsetLimit = name === 'cpu' ? capacity.cpuMilli : name === 'memory' ? capacity.memoryBytes : name === 'ephemeral-storage' ? (capacity.ephemeralStorageBytes ?? 0) : 0;
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const field = `container ${containerName} resources.${kind}.${name}`;
  const value = kind === 'limits' ? amount(limits[name], unsetLimit, milli, field) : amount(requests[name] ?? limits[name], 0, milli, field);
  const divisorQ = ref.divisor === undefined ? undefined : parseQuantity(ref.divisor, `${subject}.divisor`);
  const divisor = divisorQ === undefined || divisorQ.mantissa === 0n ? (milli ? 1000 : 1) : milli ? quantityMilliValue(divisorQ) : quantityValue(divisorQ);
  if (divisor <= 0) throw invalid(`divisor ${quoteValue(ref.divisor)} must be positive`, `${subject}.divisor`);
  return String(Math.ceil(value / divisor));
}

/** The files of a downwardAPI volume or source. Throws `VOLUME_INVALID` (or the quantity parser's `API_INVALID_QUANTITY`). */
export function downwardAPIPayload(
  items: readonly DownwardAPIVolumeFile[],
  defaultMode: number,
  pod: NodePod,
  capacity: NodeCapacity,
  subject: string,
): Map<string, FileProjection> {
  const payload = new Map<string, FileProjection>();
  items.forEach((item, i) => {
    const at = `${subject}.items[${i}]`;
    const mode = fileMode(item.mode, defaultMode, `${at}.mode`);
    if ((item.fieldRef === undefined) === (item.resourceFieldRef === undefined)) {
      throw invalid('exactly one of fieldRef and resourceFieldRef must be set', at);
    }
    const text = item.fieldRef !== undefined
      ? volumeFieldValue(item.fieldRef, pod, `${at}.fieldRef`)
      : volumeResourceValue(item.resourceFieldRef as ResourceFieldSelector, pod, capacity, `${at}.resourceFieldRef`);
    payload.set(item.path, { data: Buffer.from(text, 'utf8'), mode });
  });
  return payload;
}

/**
 * Which volume a claim gets (upstream's FindMatchingVolume and the PV controller's access-mode
 * index), shared by the PV controller and the scheduler's volume binding:
 *
 * - a volume pre-bound to the claim (its claimRef names the claim) wins at once, unless the
 *   node (scheduler path) is outside its node affinity, in which case nothing matches;
 * - otherwise the smallest Available volume that is large enough, of the claim's class and
 *   volume mode, not being deleted, whose labels match the claim's selector (and, on the
 *   scheduler path, whose node affinity admits the node and whose access modes cover the claim's);
 * - with delayed binding (WaitForFirstConsumer) and no node, unbound volumes are left to the
 *   scheduler.
 *
 * The PV controller searches the volumes by their access modes, the sets with the fewest modes
 * first (a ReadWriteOnce claim prefers a ReadWriteOnce volume to a ReadWriteOnce+ReadOnlyMany one).
 */
import type { Node, PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { labelSelectorMatches } from '../../../api/label-selector.js';
import { compareQuantities, parseQuantity, type Quantity } from '../../../api/quantity.js';
import {
  accessModesSatisfied, claimClass, isVolumeBoundToClaim, volumeClass, volumeModeMismatch, volumeNodeAffinityMatches,
} from '../../../api/storage/index.js';

export interface MatchOptions {
  /** The scheduler's candidate node (node affinity and access modes are checked). */
  readonly node?: Pick<Node, 'metadata'>;
  /** Volumes already chosen for other claims of the same pod. */
  readonly excluded?: ReadonlySet<string>;
  /** The claim's class binds on first use: the PV controller leaves unbound volumes alone. */
  readonly delayBinding: boolean;
}

function quantity(text: unknown): Quantity | undefined {
  try {
    return parseQuantity(String(text));
  } catch {
    // A malformed quantity is refused by validation; an object that has one matches nothing.
    return undefined;
  }
}

export function findMatchingVolume(claim: PersistentVolumeClaim, volumes: readonly PersistentVolume[], options: MatchOptions): PersistentVolume | undefined {
  const requested = quantity(claim.spec?.resources?.requests?.storage ?? '0') ?? parseQuantity('0');
  const wantedClass = claimClass(claim);
  let smallest: { volume: PersistentVolume; size: Quantity } | undefined;
  for (const volume of volumes) {
    if (options.excluded?.has(volume.metadata?.name ?? '') === true) continue;
    if (volume.spec?.claimRef !== undefined && !isVolumeBoundToClaim(volume, claim)) continue;
    const size = quantity(volume.spec?.capacity?.storage);
    if (size === undefined || compareQuantities(size, requested) < 0) continue;
    if (volumeModeMismatch(claim, volume)) continue;
    if ((volume.metadata?.deletionTimestamp ?? '') !== '') continue;
    const affinityOk = options.node === undefined || volumeNodeAffinityMatches(volume, options.node);
    if (isVolumeBoundToClaim(volume, claim)) return affinityOk ? volume : undefined;
    if (options.node === undefined && options.delayBinding) continue;
    if (volume.status?.phase !== 'Available') continue;
    if (claim.spec?.selector !== undefined && !labelSelectorMatches(claim.spec.selector, volume.metadata?.labels)) continue;
    if (volumeClass(volume) !== wantedClass) continue;
    if (!affinityOk) continue;
    if (options.node !== undefined && !accessModesSatisfied(claim, volume)) continue;
    if (smallest === undefined || compareQuantities(smallest.size, size) > 0) smallest = { volume, size };
  }
  return smallest?.volume;
}

const modesKey = (volume: PersistentVolume): string => [...new Set(volume.spec?.accessModes ?? [])].sort().join(',');

/** The PV controller's search: the access-mode sets that cover the claim's, fewest modes first. */
export function findBestMatchForClaim(claim: PersistentVolumeClaim, volumes: readonly PersistentVolume[], delayBinding: boolean): PersistentVolume | undefined {
  const groups = new Map<string, PersistentVolume[]>();
  for (const v of volumes) {
    const key = modesKey(v);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [v]);
    else group.push(v);
  }
  const wanted = claim.spec?.accessModes ?? [];
  const candidates = [...groups.keys()]
    .map((key) => ({ key, modes: key === '' ? [] : key.split(',') }))
    .filter((g) => wanted.every((m) => g.modes.includes(m)))
    .sort((a, b) => a.modes.length - b.modes.length || a.key.localeCompare(b.key));
  for (const { key } of candidates) {
    const found = findMatchingVolume(claim, groups.get(key) ?? [], { delayBinding });
    if (found !== undefined) return found;
  }
  return undefined;
}

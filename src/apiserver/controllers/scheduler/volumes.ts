/**
 * The scheduler's volume plugins (upstream v1.28's VolumeRestrictions, NodeVolumeLimits for CSI
 * and VolumeBinding), for pods with volumes through claims, as one scheduling cycle:
 *
 * - PreFilter (for every node at once): a persistentVolumeClaim volume whose claim is missing:
 *   `persistentvolumeclaim "x" not found` (unresolvable); a claim being deleted, or a generic
 *   ephemeral volume's claim missing or not the pod's: an error (the pod is tried again); an
 *   unbound claim of a class that binds at once: `pod has unbound immediate PersistentVolumeClaims`;
 * - Filter, per node, in upstream's order: a ReadWriteOncePod claim another pod uses; the node's
 *   CSI attach limit (its CSINode's allocatable count per driver) exceeded by the pod's new
 *   volumes; a bound claim's volume missing or with a node affinity excluding the node; an unbound
 *   WaitForFirstConsumer claim with no Available volume for the node (node affinity, class,
 *   size, modes, selector; the smallest) and no way to provision one there;
 * - Reserve: the chosen volumes assumed bound (claimRef) and the claims to provision assumed to
 *   have the node (`volume.orch.io/selected-node`), so the next pods see them taken;
 * - PreBind: those writes (the volume's claimRef and bound-by-controller annotation, the claim's
 *   annotation), then a wait (polled) until the PV controller bound every claim, at most
 *   `bindTimeoutMs` (600 s); Unreserve drops the assumptions.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod, TopologySelectorTerm } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../api/clock.js';
import { messageOf } from '../../../api/errors.js';
import {
  ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, claimClass, claimOfVolume, ephemeralClaimOwnerProblem, NO_PROVISIONER,
  volumeClass, volumeNodeAffinityMatches,
} from '../../../api/storage/index.js';
import { cloneJson } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import type { Informer, ResourceClient } from '../client/index.js';
import { claimReference, findMatchingVolume, isDelayBinding } from '../persistentvolume/index.js';
import { AssumeCache } from './assume-cache.js';
import type { FilterFailure } from './framework.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

export const REASON_RWOP_CONFLICT = 'node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod';
export const REASON_MAX_VOLUME_COUNT = 'node(s) exceed max volume count';
export const REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const REASON_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';

export interface SchedulerVolumesOptions {
  readonly claims: Informer;
  readonly volumes: Informer;
  readonly classes: Informer;
  readonly csiNodes: Informer;
  readonly volumesClient: ResourceClient;
  readonly claimsClient: ResourceClient;
  readonly clock: Clock;
  /** Upstream's bindTimeoutSeconds (600 s). */
  readonly bindTimeoutMs?: number;
  /** How often PreBind looks whether the claims are bound (1 s). */
  readonly pollIntervalMs?: number;
}

export interface VolumeReservation {
  /** The writes and the wait of PreBind; throws `binding volumes: ...`. */
  preBind(): Promise<void>;
  unreserve(): void;
}

export interface VolumeCheck {
  filter(node: NodeInfo): FilterFailure | undefined;
  /** The writes the node needs (undefined: every claim is bound already). */
  reserve(node: string): VolumeReservation | undefined;
}

export type VolumeCycle =
  | { readonly kind: 'none' }
  | { readonly kind: 'unresolvable'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string }
  | ({ readonly kind: 'check' } & VolumeCheck);

interface NodePlan {
  readonly bindings: { claim: WireObject; volume: WireObject }[];
  readonly provisions: WireObject[];
}

/** A CSI volume as the attach limit counts it. */
interface CountedVolume { readonly driver: string; readonly handle: string }

function topologyMatches(terms: readonly TopologySelectorTerm[], labels: Readonly<Record<string, string>>): boolean {
  if (terms.length === 0) return true;
  return terms.some((t) => (t.matchLabelExpressions ?? []).every((e) => labels[e.key] !== undefined && e.values.includes(labels[e.key] ?? '')));
}

export class SchedulerVolumes {
  private readonly o: SchedulerVolumesOptions;
  private readonly volumeCache: AssumeCache;
  private readonly claimCache: AssumeCache;

  constructor(options: SchedulerVolumesOptions) {
    this.o = options;
    this.volumeCache = new AssumeCache(options.volumes);
    this.claimCache = new AssumeCache(options.claims);
  }

  /** Calls `listener` when a change of volumes, claims, classes or CSINodes may let waiting pods fit. */
  onChange(listener: () => void): void {
    const handler = { added: listener, updated: listener };
    for (const i of [this.o.volumes, this.o.claims, this.o.classes, this.o.csiNodes]) i.addHandler(handler);
  }

  cycle(pod: PodInfo, usersOfClaim: (claim: string) => number): VolumeCycle {
    if (!pod.hasClaimVolumes) return { kind: 'none' };
    const namespace = namespaceOf(pod.object);
    // VolumeRestrictions' PreFilter.
    let rwopConflicts = 0;
    for (const v of pod.pod.spec?.volumes ?? []) {
      if (v.persistentVolumeClaim === undefined) continue;
      const claim = this.claimCache.get(namespace, v.persistentVolumeClaim.claimName);
      if (claim === undefined) return { kind: 'unresolvable', message: `persistentvolumeclaim "${v.persistentVolumeClaim.claimName}" not found` };
      if (((claim as PersistentVolumeClaim).spec?.accessModes ?? []).includes('ReadWriteOncePod') && usersOfClaim(`${namespace}/${nameOf(claim)}`) > 0) rwopConflicts++;
    }
    // VolumeBinding's PreFilter.
    const bound: WireObject[] = [];
    const delayed: WireObject[] = [];
    for (const v of pod.pod.spec?.volumes ?? []) {
      const ref = claimOfVolume(nameOf(pod.object), v);
      if (ref === undefined) continue;
      const claim = this.claimCache.get(namespace, ref.name);
      const failed = (message: string): VolumeCycle => ({ kind: 'error', message: `running PreFilter plugin "VolumeBinding": ${message}` });
      if (claim === undefined) return failed(`persistentvolumeclaim "${ref.name}" not found`);
      if (str(metaOf(claim).deletionTimestamp) !== '') return failed(`persistentvolumeclaim "${ref.name}" is being deleted`);
      const owner = ref.ephemeral ? ephemeralClaimOwnerProblem(pod.pod, claim) : undefined;
      if (owner !== undefined) return failed(owner);
      if (str(rec(claim.spec).volumeName) !== '') bound.push(claim);
      else if (isDelayBinding(this.o.classes, claim)) delayed.push(claim);
      else return { kind: 'unresolvable', message: UNBOUND_IMMEDIATE };
    }
    const plans = new Map<string, NodePlan>();
    const newVolumes = this.countedVolumes(pod.pod);
    return {
      kind: 'check',
      filter: (node) => {
        if (rwopConflicts > 0) return { reasons: [REASON_RWOP_CONFLICT], unresolvable: false };
        if (this.exceedsLimits(node, newVolumes)) return { reasons: [REASON_MAX_VOLUME_COUNT], unresolvable: false };
        const { reasons, plan } = this.findVolumes(node, bound, delayed);
        if (reasons.length > 0) return { reasons, unresolvable: true };
        plans.set(node.name, plan);
        return undefined;
      },
      reserve: (node) => {
        const plan = plans.get(node);
        return plan === undefined || (plan.bindings.length === 0 && plan.provisions.length === 0) ? undefined : this.reserve(node, plan);
      },
    };
  }

  private findVolumes(node: NodeInfo, bound: readonly WireObject[], delayed: readonly WireObject[]): { reasons: string[]; plan: NodePlan } {
    const reasons = new Set<string>();
    const plan: NodePlan = { bindings: [], provisions: [] };
    const target = node.node ?? { metadata: { name: node.name } };
    for (const claim of bound) {
      const volume = this.volumeCache.get('', str(rec(claim.spec).volumeName));
      if (volume === undefined) reasons.add(REASON_PV_NOT_EXIST);
      else if (!volumeNodeAffinityMatches(volume, target)) reasons.add(REASON_NODE_CONFLICT);
    }
    const chosen = new Set<string>();
    const volumes = this.volumeCache.list();
    for (const claim of delayed) {
      const cls = claimClass(claim);
      const candidates = volumes.filter((v) => volumeClass(v as PersistentVolume) === cls) as PersistentVolume[];
      const match = findMatchingVolume(claim, candidates, { node: target, excluded: chosen, delayBinding: true });
      if (match !== undefined) {
        chosen.add(nameOf(match as WireObject));
        plan.bindings.push({ claim, volume: match as WireObject });
        continue;
      }
      const sc = this.o.classes.get('', cls);
      const terms = (rec(sc).allowedTopologies ?? []) as TopologySelectorTerm[];
      if (sc === undefined || str(sc.provisioner) === NO_PROVISIONER || !topologyMatches(terms, target.metadata?.labels ?? {})) reasons.add(REASON_BIND_CONFLICT);
      else plan.provisions.push(claim);
    }
    return { reasons: [...reasons], plan };
  }

  /** The pod's CSI volumes through claims: bound ones by their handle, unbound ones by their class's provisioner. */
  private countedVolumes(pod: Pod): CountedVolume[] {
    const out: CountedVolume[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      const ref = claimOfVolume(pod.metadata?.name ?? '', v);
      const namespace = pod.metadata?.namespace ?? '';
      const claim = ref === undefined ? undefined : this.claimCache.get(namespace, ref.name);
      if (ref === undefined || claim === undefined) continue;
      const volumeName = str(rec(claim.spec).volumeName);
      if (volumeName !== '') {
        const csi = (this.volumeCache.get('', volumeName) as PersistentVolume | undefined)?.spec?.csi;
        if (csi !== undefined) out.push({ driver: csi.driver, handle: csi.volumeHandle });
      } else {
        const provisioner = str(this.o.classes.get('', claimClass(claim))?.provisioner);
        if (provisioner !== '') out.push({ driver: provisioner, handle: `${namespace}-${ref.name}` });
      }
    }
    return out;
  }

  /** NodeVolumeLimits (CSI): the node's attached volumes per driver plus the pod's new ones stay within its CSINode's counts. */
  private exceedsLimits(node: NodeInfo, wanted: readonly CountedVolume[]): boolean {
    if (wanted.length === 0) return false;
    const limits = new Map<string, number>();
    for (const d of (rec(this.o.csiNodes.get('', node.name)?.spec).drivers ?? []) as { name: string; allocatable?: { count?: number } }[]) {
      if (typeof d.allocatable?.count === 'number') limits.set(d.name, d.allocatable.count);
    }
    if (!wanted.some((v) => limits.has(v.driver))) return false;
    const attached = new Map<string, Set<string>>();
    for (const other of node.pods.values()) {
      for (const v of this.countedVolumes(other.pod)) {
        if (!attached.has(v.driver)) attached.set(v.driver, new Set());
        attached.get(v.driver)?.add(v.handle);
      }
    }
    const added = new Map<string, Set<string>>();
    for (const v of wanted) {
      if (attached.get(v.driver)?.has(v.handle) === true) continue;
      if (!added.has(v.driver)) added.set(v.driver, new Set());
      added.get(v.driver)?.add(v.handle);
    }
    for (const [driver, handles] of added) {
      const limit = limits.get(driver);
      if (limit !== undefined && (attached.get(driver)?.size ?? 0) + handles.size > limit) return true;
    }
    return false;
  }

  private reserve(node: string, plan: NodePlan): VolumeReservation {
    const volumes = plan.bindings.map(({ claim, volume }) => {
      const assumed = cloneJson(volume);
      assumed.spec = { ...rec(assumed.spec), claimRef: claimReference(claim) };
      metaOf(assumed).annotations = { ...rec(metaOf(assumed).annotations), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      this.volumeCache.assume(assumed);
      return assumed;
    });
    const claims = plan.provisions.map((claim) => {
      const assumed = cloneJson(claim);
      metaOf(assumed).annotations = { ...rec(metaOf(assumed).annotations), [ANN_SELECTED_NODE]: node };
      this.claimCache.assume(assumed);
      return assumed;
    });
    const unreserve = (): void => {
      for (const v of volumes) this.volumeCache.restore('', nameOf(v));
      for (const c of claims) this.claimCache.restore(namespaceOf(c), nameOf(c));
    };
    return {
      unreserve,
      preBind: async () => {
        try {
          for (const v of volumes) await this.o.volumesClient.update('', nameOf(v), v);
          for (const c of claims) await this.o.claimsClient.update(namespaceOf(c), nameOf(c), c);
          await this.waitBound([...plan.bindings.map((b) => b.claim), ...plan.provisions], new Set(claims.map((c) => `${namespaceOf(c)}/${nameOf(c)}`)));
        } catch (err) {
          throw new Error(`binding volumes: ${messageOf(err)}`, { cause: err });
        }
      },
    };
  }

  /** Waits until the PV controller bound every claim (or a provisioning was given up). */
  private async waitBound(claims: readonly WireObject[], provisioning: ReadonlySet<string>): Promise<void> {
    const deadline = this.o.clock.now() + (this.o.bindTimeoutMs ?? 600_000);
    for (;;) {
      let done = true;
      for (const c of claims) {
        const current = this.o.claims.get(namespaceOf(c), nameOf(c));
        if (current === undefined) throw new Error(`persistentvolumeclaim "${nameOf(c)}" not found`);
        if (str(metaOf(current).uid) !== str(metaOf(c).uid)) throw new Error(`persistentvolumeclaim "${nameOf(c)}" was replaced`);
        const annotations = rec(metaOf(current).annotations);
        if (provisioning.has(`${namespaceOf(c)}/${nameOf(c)}`) && annotations[ANN_SELECTED_NODE] === undefined) throw new Error(`provisioning failed for PVC "${nameOf(c)}"`);
        if (str(rec(current.spec).volumeName) === '' || annotations[ANN_BIND_COMPLETED] === undefined) done = false;
      }
      if (done) return;
      if (this.o.clock.now() >= deadline) throw new Error('timed out waiting for the condition');
      await this.o.clock.sleep(this.o.pollIntervalMs ?? 1_000);
    }
  }
}

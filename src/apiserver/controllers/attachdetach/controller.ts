/**
 * persistentvolume-attach-detach-controller (upstream's attach/detach controller for CSI volumes,
 * v1.28), node by node, for the nodes whose agent leaves attaching to it (annotation
 * `volumes.orch.io/controller-managed-attach-detach: "true"`):
 *
 * - attach: a VolumeAttachment (attacher the driver, source the PersistentVolume, the node) for
 *   each attachment the node's pods need (desired.ts); the external attacher sets
 *   `status.attached`;
 * - node status: `status.volumesAttached` lists the attached volumes (`orch.io/csi/<driver>^<handle>`,
 *   devicePath ""), without those being detached; the node agent waits for its volumes there;
 * - detach: a VolumeAttachment no pod on the node needs any more is deleted once the node no longer
 *   reports the volume in `status.volumesInUse` (the node agent unmounted it), or at once when the
 *   node is gone or tainted `node.orch.io/out-of-service`, or after `maxWaitForUnmountMs` (6 min)
 *   on a node that is not Ready; first the node status stops listing it.
 *
 * Work is queued per node: pods are indexed by node and by claim, so a change reaches only the
 * nodes it concerns (a pod without claims is never looked at twice).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../api/clock.js';
import { isAlreadyExists, isNotFound } from '../../../api/errors.js';
import { ANN_CONTROLLER_MANAGED_ATTACH_DETACH, claimOfVolume } from '../../../api/storage/index.js';
import { jsonEqual } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs, strings } from '../../resources/common/index.js';
import { updateObject, WorkQueue, type Informer, type Log, type ResourceClient } from '../client/index.js';
import { attachmentOf, desiredAttachments, type Attachment, type DesiredSources } from './desired.js';

export interface AttachDetachOptions {
  readonly nodes: Informer;
  readonly pods: Informer;
  readonly claims: Informer;
  readonly volumes: Informer;
  readonly csiDrivers: Informer;
  readonly attachments: Informer;
  readonly attachmentsClient: ResourceClient;
  readonly nodesClient: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
  /** Upstream's maxWaitForUnmountDuration (6 min). */
  readonly maxWaitForUnmountMs?: number;
}

const OUT_OF_SERVICE = 'node.orch.io/out-of-service';
const podKey = (p: WireObject): string => `${namespaceOf(p)}/${nameOf(p)}`;
const nodeOfAttachment = (va: WireObject): string => str(rec(va.spec).nodeName);

/** What of a node the controller reads: whether it is managed, what it uses, its health. */
function nodeFacts(node: WireObject): unknown {
  return {
    managed: rec(metaOf(node).annotations)[ANN_CONTROLLER_MANAGED_ATTACH_DETACH],
    inUse: rec(node.status).volumesInUse,
    ready: recs(rec(node.status).conditions).find((c) => c.type === 'Ready')?.status,
    taints: rec(node.spec).taints,
  };
}

/** Adds `value` to the set under `key`; removes `value` from it when `add` is false. */
function index(map: Map<string, Set<string>>, key: string, value: string, add: boolean): void {
  let set = map.get(key);
  if (add) {
    if (set === undefined) map.set(key, (set = new Set()));
    set.add(value);
  } else if (set !== undefined) {
    set.delete(value);
    if (set.size === 0) map.delete(key);
  }
}

export class AttachDetachController {
  private readonly o: AttachDetachOptions;
  private readonly queue: WorkQueue;
  private readonly sources: DesiredSources;
  /** Pods with claims, by node and by claim (`namespace/claim`). */
  private readonly podsByNode = new Map<string, Set<string>>();
  private readonly podsByClaim = new Map<string, Set<string>>();
  /** When an attachment stopped being wanted (for the unmount timeout). */
  private readonly unwantedSince = new Map<string, number>();
  /** What node status calls each attachment's volume (kept after its PersistentVolume goes). */
  private readonly uniqueNames = new Map<string, string>();

  constructor(options: AttachDetachOptions) {
    this.o = options;
    this.queue = new WorkQueue({ clock: options.clock, log: options.log, what: 'persistentvolume-attach-detach-controller', process: (node) => this.syncNode(node) });
    this.sources = {
      claim: (ns, name) => options.claims.get(ns, name),
      volume: (name) => options.volumes.get('', name),
      csiDriver: (name) => options.csiDrivers.get('', name),
    };
    options.pods.addHandler({
      added: (p) => { this.podChanged(undefined, p); },
      updated: (old, p) => { this.podChanged(old, p); },
      deleted: (p) => { this.podChanged(p, undefined); },
    });
    const claimChanged = (c: WireObject): void => { this.claimChanged(`${namespaceOf(c)}/${nameOf(c)}`); };
    options.claims.addHandler({ added: claimChanged, updated: (_o, c) => { claimChanged(c); }, deleted: claimChanged });
    const volumeChanged = (v: WireObject): void => {
      const ref = rec(rec(v.spec).claimRef);
      if (str(ref.name) !== '') this.claimChanged(`${str(ref.namespace)}/${str(ref.name)}`);
    };
    options.volumes.addHandler({ added: volumeChanged, updated: (_o, v) => { volumeChanged(v); }, deleted: volumeChanged });
    const everyNode = (): void => { for (const n of this.podsByNode.keys()) this.queue.add(n); };
    options.csiDrivers.addHandler({ added: everyNode, updated: everyNode, deleted: everyNode });
    const attachmentChanged = (va: WireObject): void => { this.queue.add(nodeOfAttachment(va)); };
    options.attachments.addHandler({ added: attachmentChanged, updated: (_o, va) => { attachmentChanged(va); }, deleted: attachmentChanged });
    options.nodes.addHandler({
      added: (n) => { this.queue.add(nameOf(n)); },
      updated: (old, n) => { if (!jsonEqual(nodeFacts(old), nodeFacts(n))) this.queue.add(nameOf(n)); },
      deleted: (n) => { this.queue.add(nameOf(n)); },
    });
  }

  start(): void {
    for (const n of this.o.nodes.list()) this.queue.add(nameOf(n));
    for (const va of this.o.attachments.list()) this.queue.add(nodeOfAttachment(va));
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private podChanged(old: WireObject | undefined, pod: WireObject | undefined): void {
    for (const [p, add] of [[old, false], [pod, true]] as const) {
      if (p === undefined) continue;
      const node = str(rec(p.spec).nodeName);
      const claims = ((p as Pod).spec?.volumes ?? []).map((v) => claimOfVolume(nameOf(p), v)).filter((c) => c !== undefined);
      if (claims.length === 0) continue;
      if (node !== '') {
        index(this.podsByNode, node, podKey(p), add);
        this.queue.add(node);
      }
      for (const c of claims) index(this.podsByClaim, `${namespaceOf(p)}/${c.name}`, podKey(p), add);
    }
  }

  private claimChanged(key: string): void {
    for (const pk of this.podsByClaim.get(key) ?? []) {
      const slash = pk.indexOf('/');
      const pod = this.o.pods.get(pk.slice(0, slash), pk.slice(slash + 1));
      const node = str(rec(pod?.spec).nodeName);
      if (node !== '') this.queue.add(node);
    }
  }

  private podsOn(node: string): WireObject[] {
    return [...this.podsByNode.get(node) ?? []].map((k) => {
      const slash = k.indexOf('/');
      return this.o.pods.get(k.slice(0, slash), k.slice(slash + 1));
    }).filter((p) => p !== undefined);
  }

  /** Whether a no longer wanted attachment may go now; schedules a look again when only the timeout is left. */
  private mayDetach(va: WireObject, node: WireObject | undefined, uniqueName: string | undefined): boolean {
    if (node === undefined) return true;
    if (recs(rec(node.spec).taints).some((t) => t.key === OUT_OF_SERVICE)) return true;
    if (uniqueName === undefined || !strings(rec(node.status).volumesInUse).includes(uniqueName)) return true;
    const since = this.unwantedSince.get(nameOf(va)) ?? this.o.clock.now();
    this.unwantedSince.set(nameOf(va), since);
    const ready = recs(rec(node.status).conditions).find((c) => c.type === 'Ready')?.status === 'True';
    if (ready) return false;
    const left = since + (this.o.maxWaitForUnmountMs ?? 360_000) - this.o.clock.now();
    if (left <= 0) return true;
    this.queue.addAfter(nameOf(node), left);
    return false;
  }

  private async syncNode(name: string): Promise<void> {
    const node = this.o.nodes.get('', name);
    if (node !== undefined && rec(metaOf(node).annotations)[ANN_CONTROLLER_MANAGED_ATTACH_DETACH] !== 'true') return;
    const desired = node === undefined ? new Map<string, Attachment>() : desiredAttachments(name, this.podsOn(name), this.sources);
    const existing = this.o.attachments.list().filter((va) => nodeOfAttachment(va) === name && str(rec(rec(va.spec).source).persistentVolumeName) !== '');
    for (const a of desired.values()) this.uniqueNames.set(a.name, a.uniqueName);
    const detaching = new Set<string>();
    for (const va of existing) {
      const vaName = nameOf(va);
      const pv = this.o.volumes.get('', str(rec(rec(va.spec).source).persistentVolumeName));
      const seen = pv === undefined ? undefined : attachmentOf(pv, name, this.sources);
      if (seen !== undefined && seen.name === vaName) this.uniqueNames.set(vaName, seen.uniqueName);
      if (str(metaOf(va).deletionTimestamp) !== '') {
        detaching.add(vaName);
        continue;
      }
      if (desired.has(vaName)) {
        this.unwantedSince.delete(vaName);
        continue;
      }
      if (this.mayDetach(va, node, this.uniqueNames.get(vaName))) detaching.add(vaName);
    }
    if (node !== undefined) await this.reportAttached(node, existing.filter((va) => rec(va.status).attached === true && !detaching.has(nameOf(va))));
    for (const va of existing) {
      if (!detaching.has(nameOf(va)) || str(metaOf(va).deletionTimestamp) !== '') continue;
      try {
        await this.o.attachmentsClient.delete('', nameOf(va), { uid: str(metaOf(va).uid) });
        this.unwantedSince.delete(nameOf(va));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const present = new Set(existing.map(nameOf));
    for (const a of desired.values()) {
      if (present.has(a.name)) continue;
      try {
        await this.o.attachmentsClient.create('', {
          apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name: a.name },
          spec: { attacher: a.driver, source: { persistentVolumeName: a.persistentVolume }, nodeName: a.node },
        });
      } catch (err) {
        // A previous one still being deleted (or our watch behind): its deletion queues the node again.
        if (!isAlreadyExists(err)) throw err;
      }
    }
  }

  /** node.status.volumesAttached: the attached volumes, by name. */
  private async reportAttached(node: WireObject, attached: readonly WireObject[]): Promise<void> {
    const entries = attached
      .map((va) => this.uniqueNames.get(nameOf(va)))
      .filter((n) => n !== undefined)
      .sort()
      .map((n) => ({ name: n, devicePath: '' }));
    const current = recs(rec(node.status).volumesAttached);
    if (jsonEqual(current, entries)) return;
    await updateObject(this.o.nodesClient, '', nameOf(node), (n) => {
      const status = rec(n.status);
      if (jsonEqual(recs(status.volumesAttached), entries)) return false;
      if (entries.length === 0) delete status.volumesAttached;
      else status.volumesAttached = entries;
      n.status = status;
      return true;
    }, { subresource: 'status', current: node });
  }
}

/** Fakes of the CSI module's unit tests: a driver in memory, a node info publisher, the API reads. */
import { readFile, writeFile } from 'node:fs/promises';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';

import type { CsiNodeClient, ExpandRequest, NodeInfo, PublishRequest, StageRequest, VolumeStats } from './client.js';
import type { NodeInfoPublisher } from './drivers.js';
import type { CsiApi } from './mounter.js';

/** A driver in memory: "mounts" are lines it writes to a fake mountinfo file. */
export class FakeDriver implements CsiNodeClient {
  calls: string[] = [];
  failing = new Set<string>();
  stage = true;
  /** Capabilities besides STAGE_UNSTAGE_VOLUME (when `stage`) and GET_VOLUME_STATS. */
  extra: string[] = [];
  /** The stage and publish requests, in order. */
  requests: (StageRequest | PublishRequest)[] = [];
  expanded: ExpandRequest[] = [];
  info: NodeInfo = { nodeId: 'n1', maxVolumesPerNode: 0, topology: { zone: 'a' } };
  closed = 0;
  constructor(private readonly mountInfo: string) {}
  private async record(method: string): Promise<void> {
    this.calls.push(method);
    if (this.failing.has(method)) throw Object.assign(new Error(method), { code: 13, details: `${method} broke` });
    await Promise.resolve();
  }
  private async setMounted(path: string, mounted: boolean): Promise<void> {
    const lines = (await readFile(this.mountInfo, 'utf8')).split('\n').filter((l) => l !== '' && l.split(' ')[4] !== path);
    if (mounted) lines.push(`1 1 0:1 / ${path} rw - fake fake rw`);
    await writeFile(this.mountInfo, lines.join('\n') + '\n');
  }
  async nodeGetInfo(): Promise<NodeInfo> { await this.record('NodeGetInfo'); return this.info; }
  async nodeGetCapabilities(): Promise<string[]> { await this.record('NodeGetCapabilities'); return [...(this.stage ? ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS'] : []), ...this.extra]; }
  async nodeStageVolume(r: StageRequest): Promise<void> { await this.record('NodeStageVolume'); this.requests.push(r); await this.setMounted(r.stagingTargetPath, true); }
  async nodeUnstageVolume(_id: string, path: string): Promise<void> { await this.record('NodeUnstageVolume'); await this.setMounted(path, false); }
  async nodePublishVolume(r: PublishRequest): Promise<void> { await this.record('NodePublishVolume'); this.requests.push(r); await this.setMounted(r.targetPath, true); }
  async nodeUnpublishVolume(_id: string, path: string): Promise<void> { await this.record('NodeUnpublishVolume'); await this.setMounted(path, false); }
  async nodeGetVolumeStats(): Promise<VolumeStats> { await this.record('NodeGetVolumeStats'); return { bytes: { available: 1, total: 3, used: 2 } }; }
  async nodeExpandVolume(r: ExpandRequest): Promise<number> { await this.record('NodeExpandVolume'); this.expanded.push(r); return r.requiredBytes; }
  close(): void { this.closed++; }
}

export class FakePublisher implements NodeInfoPublisher {
  added: [string, NodeInfo][] = [];
  removed: string[] = [];
  add(driver: string, info: NodeInfo): Promise<void> { this.added.push([driver, info]); return Promise.resolve(); }
  remove(driver: string): Promise<void> { this.removed.push(driver); return Promise.resolve(); }
}

/** An API with no CSIDriver, VolumeAttachment or Secret unless given; claim status patches recorded in `patches`. */
export function fakeApi(o: {
  csiDriver?: () => Promise<CSIDriver | undefined>;
  volumeAttachment?: () => Promise<VolumeAttachment | undefined>;
  secrets?: Record<string, Secret>;
  patches?: { namespace: string; name: string; status: Record<string, unknown> }[];
}): CsiApi {
  return {
    csiDriver: o.csiDriver ?? (() => Promise.resolve(undefined)),
    volumeAttachment: o.volumeAttachment ?? (() => Promise.resolve(undefined)),
    secret: (namespace, name) => Promise.resolve(o.secrets?.[`${namespace}/${name}`]),
    patchClaimStatus: (namespace, name, status) => {
      o.patches?.push({ namespace, name, status });
      return Promise.resolve();
    },
  };
}

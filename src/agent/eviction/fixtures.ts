/**
 * Test fixtures of the eviction module: API pods of each QoS class, pod stats, and a node
 * whose readings the test sets. Test code only.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { API_SOURCE, CONFIG_SOURCE_ANNOTATION, type NodePod } from '../../api/pod/index.js';
import type { FsReading, NodeReadings, PodStatsView, SignalReader } from './types.js';

export const MI = 1024 * 1024;

export interface PodShape {
  readonly requests?: Record<string, string>;
  readonly limits?: Record<string, string>;
  readonly priority?: number;
  readonly source?: string;
  readonly spec?: Partial<NonNullable<Pod['spec']>>;
  readonly container?: Partial<Container>;
}

/** An API pod `name` (UID `uid-<name>`) with one container `main`. */
export function pod(name: string, s: PodShape = {}): NodePod {
  const resources = { ...(s.requests === undefined ? {} : { requests: s.requests }), ...(s.limits === undefined ? {} : { limits: s.limits }) };
  return {
    metadata: { uid: `uid-${name}`, name, namespace: 'ns', annotations: { [CONFIG_SOURCE_ANNOTATION]: s.source ?? API_SOURCE } },
    spec: {
      containers: [{ name: 'main', image: 'busybox', resources, ...s.container }],
      ...(s.priority === undefined ? {} : { priority: s.priority }),
      ...s.spec,
    },
  };
}

export function stats(p: NodePod, s: { memory?: number; rootfs?: number; logs?: number; processes?: number; volumes?: Record<string, number>; ephemeral?: number } = {}): PodStatsView {
  return {
    uid: p.metadata.uid,
    ...(s.memory === undefined ? {} : { memory: { workingSetBytes: s.memory } }),
    ...(s.processes === undefined ? {} : { processCount: s.processes }),
    containers: [{
      name: 'main',
      ...(s.memory === undefined ? {} : { memory: { workingSetBytes: s.memory } }),
      rootfs: { usedBytes: s.rootfs ?? 0, inodesUsed: 1 },
      logs: { usedBytes: s.logs ?? 0, inodesUsed: 1 },
    }],
    volumes: Object.entries(s.volumes ?? {}).map(([name, usedBytes]) => ({ name, usedBytes, inodesUsed: 1 })),
    ...(s.ephemeral === undefined ? {} : { ephemeralStorage: { usedBytes: s.ephemeral } }),
  };
}

export function fs(availableBytes: number, capacityBytes = 1000 * MI, device = 1): FsReading {
  return { capacityBytes, availableBytes, inodes: 1000, inodesFree: 900, device };
}

/** A node whose readings the test changes between passes; `reads` counts them. */
export class FakeNode implements SignalReader {
  reads = 0;
  memoryAvailable = 8000 * MI;
  workingSet = 2000 * MI;
  nodefs: FsReading = fs(500 * MI);
  imagefs: FsReading = fs(500 * MI);
  pids = { max: 32768, running: 300 };

  constructor(private readonly now: () => number) {}

  read(): Promise<NodeReadings> {
    this.reads++;
    return Promise.resolve({
      time: this.now(), errors: [],
      memory: { availableBytes: this.memoryAvailable, workingSetBytes: this.workingSet, usageBytes: this.workingSet },
      nodefs: this.nodefs, imagefs: this.imagefs, pids: this.pids,
    });
  }
}

/**
 * Test doubles of this module's inputs: a manual clock, the shared FakeRestClient with the
 * Node schema for strategic merge patches, and NodeFacts whose answers tests change. Used by
 * the unit tests only.
 */
import { nodeSchema } from '../../apiserver/resources/nodes/schema.js';
import { FakeRestClient } from '../orchclient/testing.js';
import type { MachineInfo } from './machine.js';
import type { NodeIdentity } from './node-object.js';
import type { Clock, NodeFacts, NodeImage, NodePressure, RuntimeStatus } from './types.js';

/** Lets pending promise chains run (several turns of the event loop). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 30; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private timers: { at: number; resolve: () => void }[] = [];
  /** Every sleep asked for, in ms. */
  readonly sleeps: number[] = [];

  constructor(public t = Date.UTC(2024, 0, 2, 3, 4, 5)) {}

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        this.timers = this.timers.filter((x) => x !== timer);
        resolve();
      };
      const timer = {
        at: this.t + ms,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.timers.push(timer);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves time forward by `ms`, firing the sleeps that end on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = due.at;
      due.resolve();
    }
    this.t = target;
    await flush();
  }
}

/** The API server as the node status module sees it: strategic merge patches of Nodes by their schema. */
export function fakeNodeApi(): FakeRestClient {
  return new FakeRestClient({ patchSchema: nodeSchema });
}

/** NodeFacts whose answers are fields the test changes; `runtimeDown` makes Status reject. */
export class FakeFacts implements NodeFacts {
  status: RuntimeStatus = { runtime: { ready: true }, network: { ready: true } };
  runtimeDown = false;
  version = { name: 'containerd', version: 'v1.7.2' };
  imageList: NodeImage[] = [{ names: ['registry.example/pause:3.9', 'registry.example/pause@sha256:aa'], sizeBytes: 300_000 }];
  imagesFail = false;
  problem: string | undefined;
  pressures: NodePressure = { memory: false, disk: false, pid: false };

  runtimeStatus(): Promise<RuntimeStatus> {
    return this.runtimeDown ? Promise.reject(new Error('connection refused')) : Promise.resolve(this.status);
  }

  runtimeVersion(): Promise<{ name: string; version: string }> {
    return Promise.resolve(this.version);
  }

  images(): Promise<readonly NodeImage[]> {
    return this.imagesFail ? Promise.reject(new Error('images unavailable')) : Promise.resolve(this.imageList);
  }

  health(): string | undefined {
    return this.problem;
  }

  pressure(): NodePressure {
    return this.pressures;
  }
}

export const GiB = 1024n ** 3n;

export function fakeMachine(overrides: Partial<MachineInfo> = {}): MachineInfo {
  return {
    cores: 4,
    memoryBytes: 8n * GiB,
    ephemeralStorageBytes: 100n * GiB,
    hugepages: new Map(),
    machineID: 'm-1',
    systemUUID: 'u-1',
    bootID: 'b-1',
    kernelVersion: '6.1.0',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    operatingSystem: 'linux',
    architecture: 'amd64',
    ...overrides,
  };
}

export const testIdentity: NodeIdentity = {
  nodeName: 'node-a',
  hostname: 'node-a',
  nodeLabels: { 'node.orch.io/pool': 'blue', team: 'x' },
  registerWithTaints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'only-key', value: '', effect: 'NoExecute' }],
  registerSchedulable: true,
  providerID: '',
  enableControllerAttachDetach: true,
  operatingSystem: 'linux',
  architecture: 'arm64',
};

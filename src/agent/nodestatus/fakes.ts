/**
 * Test doubles of this module's inputs: the shared FakeRestClient with the Node schema for
 * strategic merge patches, and NodeFacts whose answers tests change. Used by the unit tests
 * only (time: src/api/fake-clock.ts).
 */
import { nodeSchema } from '../../apiserver/resources/nodes/index.js';
import { FakeRestClient } from '../orchclient/testing.js';
import type { MachineInfo } from './machine.js';
import type { NodeIdentity } from './node-object.js';
import type { ExtendedResources, NodeFacts, NodeImage, NodePressure, RuntimeStatus } from './types.js';

/** The API server as the node status module sees it: strategic merge patches of Nodes by their schema. */
export function fakeNodeApi(): FakeRestClient {
  return new FakeRestClient({ patchSchemas: { nodes: nodeSchema } });
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
  devices: ExtendedResources = { capacity: new Map(), allocatable: new Map(), removed: [] };
  resetDevices = false;
  volumesInUse?: () => Promise<readonly string[]>;

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

  extendedResources(): ExtendedResources {
    return this.devices;
  }

  resetExtendedResources(): boolean {
    return this.resetDevices;
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

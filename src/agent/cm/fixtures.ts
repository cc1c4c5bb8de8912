/**
 * Test fixtures of the cm module (imported by its tests only): pods of each QoS class, and
 * temporary directories standing in for cgroup hierarchies.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';

type Resources = Container['resources'];

export function podWith(uid: string, containers: Resources[], initContainers: Resources[] = []): NodePod {
  const make = (prefix: string) => (resources: Resources, i: number): Container =>
    resources === undefined ? { name: `${prefix}${i}` } : { name: `${prefix}${i}`, resources };
  return {
    metadata: { name: `pod-${uid}`, namespace: 'default', uid },
    spec: { containers: containers.map(make('c')), initContainers: initContainers.map(make('i')) },
  };
}

export const GUARANTEED: Resources = { limits: { cpu: '500m', memory: '64Mi' } };
export const BURSTABLE: Resources = { requests: { cpu: '100m' } };

export async function makeTempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${prefix}-`));
}

/** A Guaranteed pod whose containers ask for these CPU amounts (and 64Mi each). */
export function guaranteedPod(uid: string, cpus: readonly string[], initCpus: readonly string[] = []): NodePod {
  const resources = (cpu: string): Resources => ({ requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } });
  return podWith(uid, cpus.map(resources), initCpus.map(resources));
}

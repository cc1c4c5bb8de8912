/**
 * Pod manifests and runtime queries for the agent's integration tests.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Container } from '../../src/agent/runtime/cri/index.js';
import type { CriClient } from '../../src/agent/runtime/cri/index.js';

export const NODE = 'testnode';

export interface PodOptions {
  readonly name: string;
  readonly command: string;
  readonly image: string;
  readonly hostNetwork?: boolean;
  readonly restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  readonly extraSpec?: Record<string, unknown>;
  readonly extraContainer?: Record<string, unknown>;
}

/** A one-container busybox pod running `sh -c command`. */
export function podManifest(o: PodOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name },
    spec: {
      ...(o.hostNetwork === true ? { hostNetwork: true } : {}),
      restartPolicy: o.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'main', image: o.image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', o.command], ...o.extraContainer }],
      ...o.extraSpec,
    },
  });
}

export async function writeManifest(dir: string, file: string, text: string): Promise<void> {
  // Write then rename, so the source never reads a half-written file.
  const tmp = join(dir, `.${file}.tmp`);
  await writeFile(tmp, text);
  const { rename } = await import('node:fs/promises');
  await rename(tmp, join(dir, file));
}

/** The containers of a static pod (by its name before the node suffix), newest first. */
export async function containersOf(cri: CriClient, podName: string, container?: string): Promise<Container[]> {
  const labels: Record<string, string> = { 'io.orch.pod.name': `${podName}-${NODE}` };
  if (container !== undefined) labels['io.orch.container.name'] = container;
  const list = await cri.listContainers({ labelSelector: labels });
  return [...list].sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)));
}

export async function runningContainer(cri: CriClient, podName: string, container = 'main'): Promise<Container | undefined> {
  return (await containersOf(cri, podName, container)).find((c) => c.state === 'CONTAINER_RUNNING');
}

export async function sandboxesOf(cri: CriClient, podName: string): Promise<{ id: string; state: string; labels: Record<string, string> }[]> {
  return cri.listPodSandbox({ labelSelector: { 'io.orch.pod.name': `${podName}-${NODE}` } });
}

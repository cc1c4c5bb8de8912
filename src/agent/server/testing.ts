/**
 * The agent's servers in process for tests (the unit lane's request tests and fuzz suite):
 * every listener on a free loopback port, over a FakeRuntime holding one running pod, with a
 * FakeLogger that keeps every line. Requests: rawRequest of test/helpers/loopback.ts. Test code only.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { flagDefaults, type NodeagentConfiguration } from '../config/index.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../kuberuntime/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { freePort } from '../../../test/helpers/loopback.js';
import { createAgentMetrics, startServers, type Servers } from './index.js';

export interface TestServers {
  readonly servers: Servers;
  readonly logger: FakeLogger;
  readonly ports: { readonly secure: number; readonly readOnly: number; readonly healthz: number };
  close(): Promise<void>;
}

const labels = { [POD_UID_LABEL]: 'uid-1', [POD_NAME_LABEL]: 'web', [POD_NAMESPACE_LABEL]: 'default' };

/**
 * The runtime of the servers' tests: pod `web` (uid-1, namespace default) with its container
 * `main` running, logging to `<dir>/c1.log`, with CPU and memory usage, an image filesystem and
 * one exec answer (`echo out`).
 */
export async function servedPodRuntime(dir: string): Promise<{ cri: FakeRuntime; sandboxId: string; containerId: string }> {
  const cri = new FakeRuntime();
  cri.images.set('busybox', 'sha256:busybox');
  const sandboxConfig = { metadata: { name: 'web', uid: 'uid-1', namespace: 'default', attempt: 0 }, labels, logDirectory: dir };
  const sandboxId = await cri.runPodSandbox({ config: sandboxConfig });
  const containerId = await cri.createContainer({
    podSandboxId: sandboxId, sandboxConfig,
    config: { metadata: { name: 'main', attempt: 0 }, image: { image: 'busybox' }, labels: { ...labels, [CONTAINER_NAME_LABEL]: 'main' }, logPath: 'c1.log' },
  });
  await cri.startContainer(containerId);
  cri.usage.set(containerId, { cpuCoreNanoSeconds: 2e9, cpuNanoCores: 1000, memoryWorkingSetBytes: 4096, memoryUsageBytes: 8192 });
  cri.imageFs.usedBytes = 123;
  cri.imageFs.inodesUsed = 4;
  cri.execResults.set('echo out', { exitCode: 0, stdout: 'out\n' });
  return { cri, sandboxId, containerId };
}

/** The servers' configuration in tests: the defaults, each listener on a free loopback port, then `change`. */
export async function loopbackServerConfig(change: (c: NodeagentConfiguration) => void = () => undefined): Promise<NodeagentConfiguration> {
  const config = flagDefaults();
  config.address = '127.0.0.1';
  config.port = await freePort();
  config.readOnlyPort = await freePort();
  config.healthzPort = await freePort();
  change(config);
  return config;
}

/** Starts the three listeners; `change` edits the configuration first (e.g. anonymous authentication off). */
export async function startTestServers(change: (c: NodeagentConfiguration) => void = () => undefined): Promise<TestServers> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-servers-'));
  await mkdir(join(dir, 'varlog'), { recursive: true });
  await writeFile(join(dir, 'varlog', 'syslog'), 'hello\n');
  await writeFile(join(dir, 'c1.log'), '2024-05-01T10:00:00Z stdout F one\n');
  const { cri } = await servedPodRuntime(dir);
  const pod: NodePod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } };
  const config = await loopbackServerConfig(change);
  const logger = new FakeLogger();
  const servers = await startServers({
    config, certDir: join(dir, 'pki'), rootDir: dir, nodeName: 'node1', nodeIPs: ['127.0.0.1'],
    pods: { desiredPods: () => [pod], podStatus: (uid) => (uid === 'uid-1' ? { phase: 'Running' } : undefined) },
    cri,
    healthChecks: [{ name: 'ping', check: () => undefined }],
    logs: { setVerbosity: () => undefined },
    gates: { enabled: () => false },
    metrics: createAgentMetrics({ nodeName: 'node1', runtimeCounts: () => Promise.resolve({ pods: 1, containers: { running: 1 } }) }),
    logger,
    clock: new FakeClock(),
    logDir: join(dir, 'varlog'),
  });
  return {
    servers, logger,
    ports: { secure: servers.secure?.port ?? 0, readOnly: servers.readOnly?.port ?? 0, healthz: servers.healthz?.port ?? 0 },
    close: async () => {
      await servers.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
export { FrameReader, FrameWriter } from './streaming/spdy.js';

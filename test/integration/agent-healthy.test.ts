/**
 * The healthy-container features through the real nodeagent binary (the healthy-* tests cover
 * each feature on the modules): a readiness probe turning the pod Ready, a failing liveness
 * probe restarting the container, the probe metrics on /metrics/probes of the read-only port,
 * a forbidden sysctl refused at admission (SysctlForbidden), and a sidecar (restartable init
 * container) running beside the main container with the SidecarContainers gate.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, containersOf, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

let containerd: ContainerdInstance;
let cri: CriClient;
let manifests: string;
let rootDir: string;
let agent: AgentProcess | undefined;
let readOnlyPort: number;

function fetchText(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(`http://127.0.0.1:${readOnlyPort}${path}`, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => { resolve(body); });
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function podNamed(name: string): Promise<Pod | undefined> {
  const list = JSON.parse(await fetchText('/pods')) as { items: Pod[] };
  return list.items.find((p) => p.metadata?.name === `${name}-${NODE}`);
}

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
  readOnlyPort = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir,
    args: [`--hostname-override=${NODE}`, `--read-only-port=${readOnlyPort}`, '--feature-gates=SidecarContainers=true'],
  });
});

after(async () => {
  await agent?.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
  await rm(rootDir, { recursive: true, force: true });
});

void describe('healthy containers through the agent binary', () => {
  void it('turns a pod Ready through its readiness probe and restarts a container whose liveness probe fails', async () => {
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'ready.yaml', podManifest({
      name: 'ready', image, hostNetwork: true, command: 'sleep 2; touch /tmp/ready; exec sleep 3600',
      extraContainer: { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } },
    }));
    await writeManifest(manifests, 'live.yaml', podManifest({
      name: 'live', image, hostNetwork: true, command: 'exec sleep 3600',
      extraContainer: { livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 } },
    }));
    const ready = await waitFor('the ready pod to turn Ready', async () => {
      const pod = await podNamed('ready');
      const condition = pod?.status?.conditions?.find((c) => c.type === 'Ready');
      return condition?.status === 'True' ? pod : undefined;
    }, { timeoutMs: 30_000 });
    assert.equal(ready.status?.containerStatuses?.[0]?.ready, true);
    await waitFor('the live container to be restarted by its liveness probe', async () => {
      const all = await containersOf(cri, 'live', 'main');
      return all.length >= 2 && (await runningContainer(cri, 'live')) !== undefined;
    }, { timeoutMs: 45_000 });
    await agent?.waitForLog('Container main failed liveness probe, will be restarted');
    const metrics = await fetchText('/metrics/probes');
    assert.match(metrics, /nodeagent_prober_probe_total\{[^}]*probe_type="Liveness"[^}]*result="failed"[^}]*\} [1-9]/);
    assert.match(metrics, /nodeagent_prober_probe_total\{[^}]*probe_type="Readiness"[^}]*result="successful"[^}]*\} [1-9]/);
  });

  void it('refuses a pod with a forbidden sysctl at admission and runs a sidecar beside the main container', async () => {
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'sysctl.yaml', podManifest({
      name: 'sysctl', image, command: 'exec sleep 3600',
      extraSpec: { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } },
    }));
    await writeManifest(manifests, 'sidecar.yaml', podManifest({
      name: 'sidecar', image, hostNetwork: true, command: 'exec sleep 3600',
      extraSpec: { initContainers: [{ name: 'helper', image, restartPolicy: 'Always', command: ['sh', '-c', 'exec sleep 3600'] }] },
    }));
    const refused = await waitFor('the sysctl pod to be refused', async () => {
      const pod = await podNamed('sysctl');
      return pod?.status?.phase === 'Failed' ? pod : undefined;
    }, { timeoutMs: 30_000 });
    assert.equal(refused.status?.reason, 'SysctlForbidden');
    assert.match(refused.status.message ?? '', /kernel\.msgmax/);
    assert.equal((await containersOf(cri, 'sysctl')).length, 0);
    await waitFor('the sidecar and the main container running', async () =>
      (await runningContainer(cri, 'sidecar', 'helper')) !== undefined && (await runningContainer(cri, 'sidecar')) !== undefined, { timeoutMs: 30_000 });
  });
});

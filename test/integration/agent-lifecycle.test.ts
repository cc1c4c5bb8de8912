/**
 * The node agent end to end on a real containerd: static pods from a manifest directory run
 * as real containers (host network and CNI with a host port), init containers in order,
 * downward-API env, restarts with back-off, manifest changes and removals with the grace
 * period and full cleanup, adoption after a crash, orphan cleanup.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, containersOf, podManifest, runningContainer, sandboxesOf, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

let containerd: ContainerdInstance;
let cri: CriClient;
let manifests: string;
let rootDir: string;
let agent: AgentProcess | undefined;

async function start(args: readonly string[] = []): Promise<AgentProcess> {
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir,
    // Every dead attempt stays (the restart test counts them): no per-container GC limit.
    args: [`--hostname-override=${NODE}`, '--maximum-dead-containers-per-container=-1', ...args],
  });
  return agent;
}

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
});

after(async () => {
  await agent?.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
  await rm(rootDir, { recursive: true, force: true });
});

void describe('static pods on a real runtime', () => {
  void it('makes its directories under a fresh --root-dir before any pod runs', async () => {
    const fresh = join(rootDir, 'fresh', 'root');
    const first = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir: fresh, args: [`--hostname-override=${NODE}`] });
    try {
      for (const d of ['pods', 'plugins', 'plugins_registry', 'pod-resources']) assert.ok(existsSync(join(fresh, d)), `${d} under the root dir`);
    } finally {
      assert.equal(await first.stop(), 0);
    }
  });

  void it('runs host-network and CNI pods, with a reachable host port, downward-API env and init containers in order', async () => {
    const port = await freePort();
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'web.yaml', podManifest({
      name: 'web', image,
      command: 'mkdir -p /www && echo "$POD_NAME $NODE_NAME $POD_NAMESPACE" > /www/index.html && exec httpd -f -p 8080 -h /www',
      extraContainer: {
        ports: [{ containerPort: 8080, hostPort: port }],
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        ],
      },
    }));
    await writeManifest(manifests, 'host.yaml', podManifest({ name: 'host', image, hostNetwork: true, command: 'exec sleep 3600' }));
    await writeManifest(manifests, 'init.yaml', podManifest({
      name: 'init', image, command: 'cat /work/log; exec sleep 3600',
      extraContainer: { volumeMounts: [{ name: 'work', mountPath: '/work' }] },
      extraSpec: {
        volumes: [{ name: 'work', emptyDir: {} }],
        initContainers: ['one', 'two'].map((n) => ({
          name: n, image, command: ['sh', '-c', `echo step ${n} >> /work/log`], volumeMounts: [{ name: 'work', mountPath: '/work' }],
        })),
      },
    }));
    await start();
    const body = await waitFor('the web pod to answer on its host port', () => readTcpHttp(port), { timeoutMs: 30_000 });
    assert.match(body, new RegExp(`web-${NODE} ${NODE} default`));
    // The CNI pod's first container mounts the pod's hosts file with the pod IP.
    const web = await waitFor('the web container', () => runningContainer(cri, 'web'));
    const [webSandbox] = await sandboxesOf(cri, 'web');
    const webIP = (await cri.podSandboxStatus({ podSandboxId: webSandbox?.id ?? '' })).status?.network?.ip ?? '';
    assert.notEqual(webIP, '');
    const hosts = (await cri.execSync({ containerId: web.id, cmd: ['cat', '/etc/hosts'], timeout: 10 })).stdout.toString();
    assert.match(hosts, /^# Orch-managed hosts file\.$/m);
    assert.ok(hosts.split('\n').includes(`${webIP}\tweb-${NODE}`), hosts);
    await waitFor('the host-network pod', () => runningContainer(cri, 'host'));
    const main = await waitFor('the main container after the init containers', () => runningContainer(cri, 'init'), { timeoutMs: 30_000 });
    const inits = [...(await containersOf(cri, 'init', 'one')), ...(await containersOf(cri, 'init', 'two'))];
    assert.deepEqual(inits.map((c) => c.state), ['CONTAINER_EXITED', 'CONTAINER_EXITED']);
    // The container log in the upstream layout: <podLogsDir>/<ns>_<name>_<uid>/<container>/<n>.log
    const uid = main.labels['io.orch.pod.uid'] ?? '';
    const logFile = join(agent?.podLogsDir ?? '', `default_init-${NODE}_${uid}`, 'main', '0.log');
    const log = await waitFor('the main container log', async () => {
      const text = existsSync(logFile) ? await readFile(logFile, 'utf8') : '';
      return text.includes('step two') ? text : undefined;
    });
    assert.match(log, /stdout F step one\n.*stdout F step two/);
    const sandboxes = await sandboxesOf(cri, 'host');
    assert.equal(sandboxes.length, 1);
  });

  void it('restarts a crashing container with the back-off, and never one whose policy is Never', async () => {
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'crash.yaml', podManifest({ name: 'crash', image, hostNetwork: true, command: 'exit 3' }));
    await writeManifest(manifests, 'once.yaml', podManifest({ name: 'once', image, hostNetwork: true, restartPolicy: 'Never', command: 'exit 0' }));
    // Attempt 0 fails, attempt 1 starts at once, attempt 2 only after the 10 s back-off.
    const three = await waitFor('three attempts', async () => {
      const list = await containersOf(cri, 'crash');
      return list.length >= 3 ? list : undefined;
    }, { timeoutMs: 40_000 });
    const created = three.map((c) => Number(BigInt(c.createdAt) / 1_000_000n)).reverse();
    const [t0 = 0, t1 = 0, t2 = 0] = created;
    assert.ok(t1 - t0 < 5000, `the first restart is immediate (took ${t1 - t0} ms)`);
    assert.ok(t2 - t1 >= 9000, `the second restart waits for the back-off (took ${t2 - t1} ms)`);
    const once = await containersOf(cri, 'once');
    assert.equal(once.length, 1, 'restartPolicy Never: one attempt only');
    assert.equal(once[0]?.state, 'CONTAINER_EXITED');
  });

  void it('replaces a pod whose manifest changed and removes one whose manifest is gone, with the grace period', async () => {
    const image = containerd.images.busybox;
    const before = await runningContainer(cri, 'host');
    assert.ok(before);
    // The new spec ignores TERM: the runtime kills it after the 2 s grace period.
    await writeManifest(manifests, 'host.yaml', podManifest({ name: 'host', image, hostNetwork: true, command: "trap '' TERM; while true; do sleep 1; done" }));
    const replaced = await waitFor('the changed pod', async () => {
      const c = await runningContainer(cri, 'host');
      return c !== undefined && c.labels['io.orch.pod.uid'] !== before.labels['io.orch.pod.uid'] ? c : undefined;
    }, { timeoutMs: 30_000 });
    await waitFor('the old pod removed', async () => !(await cri.listContainers({ labelSelector: { 'io.orch.pod.uid': before.labels['io.orch.pod.uid'] ?? '' } })).length);
    const uid = replaced.labels['io.orch.pod.uid'] ?? '';
    const started = Date.now();
    await rm(join(manifests, 'host.yaml'));
    await waitFor('the removed pod gone from the runtime', async () => (await sandboxesOf(cri, 'host')).length === 0, { timeoutMs: 30_000 });
    assert.ok(Date.now() - started >= 1500, 'the container that ignores TERM is killed only after its grace period');
    await waitFor('its pod directory removed', () => !existsSync(join(rootDir, 'pods', uid)));
    await waitFor('its pod cgroup removed', () => !podCgroupExists(uid));
    assert.ok(!existsSync(join(agent?.podLogsDir ?? '', `default_host-${NODE}_${uid}`)), 'its log directory is removed');
  });

  void it('adopts running containers after a crash and cleans up pods removed meanwhile', async () => {
    const web = await runningContainer(cri, 'web', 'main');
    const init = await runningContainer(cri, 'init', 'main');
    assert.ok(web && init);
    await agent?.kill();
    await rm(join(manifests, 'init.yaml'));
    await start();
    await waitFor('the orphaned pod removed', async () => (await sandboxesOf(cri, 'init')).length === 0, { timeoutMs: 30_000 });
    const after = await runningContainer(cri, 'web', 'main');
    assert.equal(after?.id, web.id, 'the web container was neither restarted nor duplicated');
    assert.equal((await containersOf(cri, 'web')).length, 1);
    assert.equal((await sandboxesOf(cri, 'web')).length, 1);
    const orphanUid = init.labels['io.orch.pod.uid'] ?? '';
    await waitFor('the orphan pod directory removed', async () => !(await readdir(join(rootDir, 'pods'))).includes(orphanUid));
    await waitFor('the orphan pod cgroup removed', () => !podCgroupExists(orphanUid));
  });
});

/** An HTTP GET of the host port; undefined until the server answers. */
async function readTcpHttp(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined; // not listening yet
  }
}

function podCgroupExists(uid: string): boolean {
  for (const qos of ['', 'burstable/', 'besteffort/']) {
    if (existsSync(join('/sys/fs/cgroup/pids', containerd.cgroupRoot, 'orchpods', `${qos}pod${uid}`))) return true;
  }
  return false;
}

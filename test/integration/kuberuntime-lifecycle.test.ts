/**
 * The runtime manager's pod lifecycle against a real containerd: init containers in order,
 * restarts with a (short, injected) back-off and CrashLoopBackOff, restartPolicy Never with a
 * termination message, a spec change restarting only that container, and a sandbox that died
 * being recreated with the next attempt.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { createRuntimeManager, type ContainerVolumes, type PodRuntimeManager, type PodSyncResult, type RuntimePodStatus } from '../../src/agent/kuberuntime/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { Cleanups, processesUnder, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { realClock } from '../../src/api/clock.js';
import type { NodePod } from '../../src/api/pod/index.js';

// Long enough that a loaded machine still syncs within the back-off after seeing the exit.
const BACKOFF_MS = 1500;
const logLines: string[] = [];
const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 4, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_s, l) => logLines.push(l) } }).logger('kuberuntime-it');
/** A loop that stops at once on TERM (busybox sh runs the trap after the current sleep). */
const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.1; done';

/** emptyDir volumes as directories under `dir`. */
function hostDirVolumes(dir: string): ContainerVolumes {
  return {
    async mountsFor(pod, container) {
      const mounts = [];
      for (const m of container.volumeMounts ?? []) {
        const hostPath = path.join(dir, pod.metadata.uid, 'volumes', m.name);
        await mkdir(hostPath, { recursive: true, mode: 0o777 });
        mounts.push({ containerPath: m.mountPath, hostPath, readonly: m.readOnly === true });
      }
      return mounts;
    },
    containerDir: (pod, container) => path.join(dir, pod.metadata.uid, 'containers', container.name),
  };
}

function podOf(name: string, spec: Partial<Pod['spec']> & { containers: Container[] }): NodePod {
  return { metadata: { name, namespace: 'kr-life', uid: randomUUID() }, spec: { terminationGracePeriodSeconds: 5, hostNetwork: true, ...spec } };
}

void describe('kuberuntime pod lifecycle against a real containerd', { timeout: 300_000 }, () => {
  const cleanups = new Cleanups();
  let ctrd: ContainerdInstance;
  let cri: CriClient;
  let manager: PodRuntimeManager;
  let data = '';
  let busybox = '';

  const uidOf = (pod: NodePod): string => pod.metadata.uid;
  const status = (pod: NodePod): Promise<RuntimePodStatus> => manager.getPodStatus(uidOf(pod), pod.metadata.name, 'kr-life');
  const sync = async (pod: NodePod): Promise<PodSyncResult> => manager.syncPod(pod, await status(pod));
  const instances = async (pod: NodePod, name: string) => (await status(pod)).containers.filter((c) => c.name === name);
  const running = async (pod: NodePod, name: string): Promise<string> =>
    waitFor(`${name} running`, async () => (await instances(pod, name)).find((c) => c.state === 'running')?.id);
  const exited = async (pod: NodePod, name: string, count: number) =>
    waitFor(`${count} exited instance(s) of ${name}`, async () => {
      const done = (await instances(pod, name)).filter((c) => c.state === 'exited');
      return done.length >= count && done;
    });
  const logDir = (pod: NodePod, container: string): string => path.join(ctrd.logDir, `kr-life_${pod.metadata.name}_${uidOf(pod)}`, container);

  before(async () => {
    ctrd = await startContainerd();
    cleanups.push(async () => {
      await ctrd.stop();
      assert.deepEqual(await processesUnder(ctrd.dir), [], 'processes left behind');
    });
    cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 60_000 });
    cleanups.push(() => {
      cri.close();
    });
    data = await mkdtemp(path.join(os.tmpdir(), 'na-kr-life-'));
    cleanups.push(() => rm(data, { recursive: true, force: true }));
    busybox = ctrd.images.busybox;
    manager = createRuntimeManager({
      clock: realClock,
      runtime: cri, images: cri, logger, podLogsRoot: ctrd.logDir,
      dns: { clusterDNS: [], clusterDomain: 'cluster.local', resolvConf: '' },
      hostIPs: () => ['127.0.0.1'], nodeName: 'node-it',
      volumes: hostDirVolumes(data), cgroupParent: (pod) => Promise.resolve(`${ctrd.cgroupRoot}/pod${uidOf(pod)}`),
      containerBackOff: { initialMs: BACKOFF_MS, maxMs: 4 * BACKOFF_MS },
    });
    cleanups.push(async () => {
      for (const p of await manager.listPods()) {
        await manager.killPod(p, { gracePeriodSeconds: 0 });
        await manager.removePod(p.uid);
      }
    });
  });

  after(async () => {
    await cleanups.run().catch((err: unknown) => {
      process.stderr.write(logLines.join(''));
      throw err;
    });
  });

  void it('init containers run one at a time, in order, before the containers', async () => {
    const mount = [{ name: 'work', mountPath: '/work' }];
    const pod = podOf('init', {
      volumes: [{ name: 'work', emptyDir: {} }],
      initContainers: [
        { name: 'first', image: busybox, command: ['sh', '-c', 'sleep 0.3; echo one >> /work/order'], volumeMounts: mount },
        { name: 'second', image: busybox, command: ['sh', '-c', 'echo two >> /work/order'], volumeMounts: mount },
      ],
      containers: [{ name: 'main', image: busybox, command: ['sh', '-c', `cat /work/order; ${SERVE}`], volumeMounts: mount }],
    });
    assert.deepEqual((await sync(pod)).errors, []);
    assert.deepEqual((await status(pod)).containers.map((c) => c.name), ['first'], 'only the first init container');
    await sync(pod);
    assert.equal((await status(pod)).containers.length, 1, 'nothing more while it runs');
    await exited(pod, 'first', 1);
    await sync(pod);
    await exited(pod, 'second', 1);
    assert.ok(!(await status(pod)).containers.some((c) => c.name === 'main'));
    await sync(pod);
    await running(pod, 'main');
    const log = await waitFor('main log', async () => {
      const t = await readFile(path.join(logDir(pod, 'main'), '0.log'), 'utf8').catch(() => '');
      return t.includes('two') && t;
    });
    assert.match(log, /stdout F one\n.*stdout F two\n/s);
    const s = await status(pod);
    assert.deepEqual(s.containers.map((c) => [c.name, c.init]), [['main', false], ['second', true], ['first', true]]);
    assert.deepEqual((await sync(pod)).errors, []);
    assert.equal((await status(pod)).containers.length, 3, 'a pass with nothing to do does nothing');
  });

  void it('a failing container restarts at once, then waits in CrashLoopBackOff, then restarts', async () => {
    const pod = podOf('crash', { containers: [{ name: 'crasher', image: busybox, command: ['sh', '-c', 'echo attempt; exit 1'] }] });
    await sync(pod);
    await exited(pod, 'crasher', 1);
    assert.deepEqual((await sync(pod)).errors, [], 'the first restart is immediate');
    await exited(pod, 'crasher', 2);
    const backedOff = await sync(pod);
    assert.equal(backedOff.errors[0]?.reason, 'CrashLoopBackOff');
    assert.equal(backedOff.errors[0].message, `back-off 1.5s restarting failed container=crasher pod=crash_kr-life(${uidOf(pod)})`);
    assert.ok((backedOff.requeueAfterMs ?? 0) > 0 && (backedOff.requeueAfterMs ?? 0) <= BACKOFF_MS);
    await waitFor('the restart after the back-off', async () => (await sync(pod)).errors.length === 0, { timeoutMs: 5_000 });
    const third = await exited(pod, 'crasher', 3);
    assert.deepEqual(third.map((c) => c.restartCount), [2, 1, 0]);
    assert.deepEqual(third.map((c) => c.exitCode), [1, 1, 1]);
    const next = await sync(pod);
    assert.match(next.errors[0]?.message ?? '', /^back-off 3s restarting failed container=crasher/);
    assert.deepEqual((await readdir(logDir(pod, 'crasher'))).sort(), ['0.log', '1.log', '2.log']);
  });

  void it('restartPolicy Never: an exited container stays exited, with its termination message; the sandbox stops', async () => {
    const pod = podOf('never', {
      restartPolicy: 'Never',
      containers: [{ name: 'once', image: busybox, command: ['sh', '-c', 'echo "it broke" > /dev/termination-log; exit 3'] }],
    });
    await sync(pod);
    const [done] = await exited(pod, 'once', 1);
    assert.deepEqual([done?.exitCode, done?.reason, done?.message], [3, 'Error', 'it broke\n']);
    assert.deepEqual((await sync(pod)).errors, []);
    const s = await status(pod);
    assert.equal(s.containers.length, 1, 'not restarted');
    assert.equal(s.sandboxes[0]?.state, 'notready', 'nothing left to run: the sandbox is stopped');
    assert.deepEqual((await sync(pod)).errors, []);
    assert.equal((await status(pod)).sandboxes.length, 1, 'no new sandbox for a finished Never pod');
  });

  void it('a spec change restarts only that container, with the next restart count', async () => {
    const spec = (args: string): Container[] => [
      { name: 'changing', image: busybox, command: ['sh', '-c', `${SERVE} # ${args}`] },
      { name: 'stable', image: busybox, command: ['sh', '-c', SERVE] },
    ];
    const pod = podOf('hash', { containers: spec('v1') });
    await sync(pod);
    const changing = await running(pod, 'changing');
    const stable = await running(pod, 'stable');
    const updated: NodePod = { ...pod, spec: { ...pod.spec, containers: spec('v2') } };
    assert.deepEqual((await sync(updated)).errors, []);
    const now = await running(updated, 'changing');
    assert.notEqual(now, changing);
    assert.equal(await running(updated, 'stable'), stable);
    const s = await status(updated);
    const all = s.containers.filter((c) => c.name === 'changing');
    assert.deepEqual(all.map((c) => [c.state, c.restartCount]), [['running', 1], ['exited', 0]]);
    assert.notEqual(all[0]?.hash, all[1]?.hash);
    assert.deepEqual((await sync(updated)).errors, []);
    assert.equal((await instances(updated, 'changing')).length, 2, 'stable afterwards');
  });

  void it('a sandbox that died is recreated with the next attempt, its containers started again', async () => {
    const pod = podOf('phoenix', { hostNetwork: false, containers: [{ name: 'app', image: busybox, command: ['sh', '-c', SERVE] }] });
    await sync(pod);
    await running(pod, 'app');
    const [first] = (await status(pod)).sandboxes;
    assert.ok(first);
    await cri.stopPodSandbox(first.id);
    await waitFor('the pod running again', async () => {
      await sync(pod);
      const s = await status(pod);
      return s.sandboxes[0]?.state === 'ready' && s.containers[0]?.state === 'running' && s;
    }, { timeoutMs: 15_000 });
    const s = await status(pod);
    assert.deepEqual(s.sandboxes.map((x) => [x.attempt, x.state]), [[1, 'ready'], [0, 'notready']]);
    assert.equal(s.ips.length, 1);
    assert.deepEqual(s.containers.map((c) => c.restartCount), [1, 0]);
  });
});

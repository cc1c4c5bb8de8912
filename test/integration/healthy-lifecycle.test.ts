/**
 * Lifecycle on real containers: postStart and preStop hooks of kind exec, httpGet and sleep
 * (a failing postStart, the preStop time taken from the grace period), termination messages
 * (File, a custom path, FallbackToLogsOnError), OOMKilled, and activeDeadlineSeconds.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import { freePort } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { conditionOf, containerStatus, startHealthyNode, type HealthyNode } from './healthy-harness.js';

const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.2; done';
const STUBBORN = 'trap "" TERM; while true; do sleep 0.2; done';

void describe('lifecycle hooks, termination details and deadlines on real containers', { timeout: 300_000 }, () => {
  let node: HealthyNode;
  let busybox = '';
  let out = '';
  let port = 0;
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.url ?? ''} ${req.headers['user-agent'] ?? ''}`);
    res.writeHead(req.url === '/fail' ? 500 : 200).end();
  });
  before(async () => {
    node = await startHealthyNode();
    busybox = node.ctrd.images.busybox;
    out = await mkdtemp(path.join(os.tmpdir(), 'na-healthy-out-'));
    port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  });
  after(async () => {
    server.close();
    await node.stop();
    await rm(out, { recursive: true, force: true });
  });

  void it('postStart hooks of kind exec, httpGet and sleep run before the container counts as started', async () => {
    const pod = node.pod('poststart', {
      hostNetwork: true,
      containers: [
        { name: 'exec', image: busybox, command: ['sh', '-c', SERVE], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo hooked > /tmp/poststart'] } } } },
        { name: 'http', image: busybox, command: ['sh', '-c', SERVE], lifecycle: { postStart: { httpGet: { path: '/started', port } } } },
        { name: 'sleep', image: busybox, command: ['sh', '-c', SERVE], lifecycle: { postStart: { sleep: { seconds: 1 } } } },
      ],
    });
    const started = Date.now();
    node.run(pod);
    await node.waitStatus(pod, 'Ready', (s) => conditionOf(s, 'Ready') === 'True');
    assert.ok(Date.now() - started >= 1000, 'the sleep hook held the sync for a second');
    assert.equal((await node.exec(pod, 'exec', ['cat', '/tmp/poststart'])).stdout, 'hooked\n');
    assert.ok(requests.includes('/started orch-lifecycle/1.28'), requests.join('\n'));
    assert.deepEqual(node.eventsOf(pod).filter((e) => e.includes('Hook')), []);
    node.remove(pod);
  });

  void it('a failing postStart kills the container (FailedPostStartHook) and shows PostStartHookError', async () => {
    const pod = node.pod('poststart-fails', {
      containers: [{ name: 'app', image: busybox, command: ['sh', '-c', SERVE], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo no way; exit 3'] } } } }],
    });
    const seen: string[] = [];
    const unsubscribe = node.status.onChange((uid, s) => {
      const waiting = uid === pod.metadata.uid ? containerStatus(s, 'app')?.state?.waiting : undefined;
      if (waiting !== undefined) seen.push(`${waiting.reason ?? ''}: ${waiting.message ?? ''}`);
    });
    try {
      node.run(pod);
      await waitFor('PostStartHookError in the status', () => seen.some((w) => w.startsWith('PostStartHookError')));
    } finally {
      unsubscribe();
    }
    const shown = seen.find((w) => w.startsWith('PostStartHookError')) ?? '';
    assert.equal(shown, `PostStartHookError: Exec lifecycle hook ([sh -c echo no way; exit 3]) for Container "app" in Pod "poststart-fails_healthy(${pod.metadata.uid})" failed - error: command 'sh -c echo no way; exit 3' exited with 3: , message: "no way\\n"`);
    const events = node.eventsOf(pod);
    const failed = events.findIndex((e) => e.startsWith('FailedPostStartHook: Exec lifecycle hook'));
    assert.ok(failed >= 0 && events.indexOf('Killing: FailedPostStartHook') > failed, events.join('\n'));
    const s = await node.waitStatus(pod, 'the killed instance', (x) => containerStatus(x, 'app')?.lastState?.terminated !== undefined || containerStatus(x, 'app')?.state?.terminated !== undefined);
    assert.ok((containerStatus(s, 'app')?.lastState?.terminated ?? containerStatus(s, 'app')?.state?.terminated) !== undefined);
    node.remove(pod);
  });

  void it('preStop hooks run before TERM, and their time is taken from the grace period', async () => {
    const pod = node.pod('prestop', {
      hostNetwork: true,
      terminationGracePeriodSeconds: 5,
      volumes: [{ name: 'out', hostPath: { path: out } }],
      containers: [
        { name: 'exec', image: busybox, command: ['sh', '-c', SERVE], volumeMounts: [{ name: 'out', mountPath: '/out' }], lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo stopping > /out/prestop'] } } } },
        { name: 'http', image: busybox, command: ['sh', '-c', SERVE], lifecycle: { preStop: { httpGet: { path: '/stopping', port } } } },
        { name: 'sleep', image: busybox, command: ['sh', '-c', STUBBORN], lifecycle: { preStop: { sleep: { seconds: 2 } } } },
      ],
    });
    node.run(pod);
    await node.waitStatus(pod, 'Ready', (s) => conditionOf(s, 'Ready') === 'True');
    // The worker removes the containers as soon as they have stopped: the status it publishes
    // after the kill is the lasting record (a poll of the runtime can miss the stopped state).
    let stopped: { at: number; status: PodStatus } | undefined;
    const unsubscribe = node.status.onChange((uid, s) => {
      const all = uid === pod.metadata.uid && (s.containerStatuses ?? []).length === 3 && (s.containerStatuses ?? []).every((c) => c.state?.terminated !== undefined);
      if (all && stopped === undefined) stopped = { at: Date.now(), status: s };
    });
    const started = Date.now();
    let seen: { at: number; status: PodStatus };
    try {
      node.remove(pod);
      seen = await waitFor('every container stopped in the status', () => stopped, { timeoutMs: 20_000 });
    } finally {
      unsubscribe();
    }
    const elapsed = seen.at - started;
    assert.ok(elapsed >= 4000 && elapsed < 6900, `the stubborn container was killed ${elapsed} ms after the stop began: 2 s of preStop + 3 s left of 5`);
    assert.equal(containerStatus(seen.status, 'sleep')?.state?.terminated?.exitCode, 137);
    assert.equal(await readFile(path.join(out, 'prestop'), 'utf8'), 'stopping\n');
    assert.ok(requests.includes('/stopping orch-lifecycle/1.28'), requests.join('\n'));
    assert.ok(node.logs.some((l) => l.includes('killing container') && l.includes('container="sleep"') && l.includes('gracePeriodSeconds=3')), 'StopContainer got 5 - 2 seconds');
    assert.ok(node.eventsOf(pod).includes('Killing: Stopping container exec'));
  });

  void it('termination messages: the file (default and custom path), and the log tail on error', async () => {
    const pod = node.pod('messages', {
      restartPolicy: 'Never',
      containers: [
        { name: 'file', image: busybox, command: ['sh', '-c', 'printf "all done" > /dev/termination-log'] },
        { name: 'custom', image: busybox, command: ['sh', '-c', 'echo "custom path" > /tmp/why; exit 2'], terminationMessagePath: '/tmp/why' },
        { name: 'logs', image: busybox, command: ['sh', '-c', 'echo "fatal: it broke"; exit 3'], terminationMessagePolicy: 'FallbackToLogsOnError' },
        { name: 'quiet', image: busybox, command: ['sh', '-c', 'echo "not an error"'], terminationMessagePolicy: 'FallbackToLogsOnError' },
      ],
    });
    node.run(pod);
    const s = await node.waitStatus(pod, 'Failed', (x) => x.phase === 'Failed');
    const t = (name: string) => containerStatus(s, name)?.state?.terminated;
    assert.deepEqual([t('file')?.reason, t('file')?.message], ['Completed', 'all done']);
    assert.deepEqual([t('custom')?.exitCode, t('custom')?.reason, t('custom')?.message], [2, 'Error', 'custom path\n']);
    assert.deepEqual([t('logs')?.exitCode, t('logs')?.message], [3, 'fatal: it broke\n']);
    assert.deepEqual([t('quiet')?.reason, t('quiet')?.message], ['Completed', undefined]);
    node.remove(pod);
  });

  void it('a container allocating beyond its memory limit is OOMKilled', async () => {
    const pod = node.pod('oom', {
      restartPolicy: 'Never',
      containers: [{ name: 'hog', image: busybox, command: ['sh', '-c', 'head -c 100m /dev/zero | tail'], resources: { limits: { memory: '16Mi' } } }],
    });
    node.run(pod);
    const s = await node.waitStatus(pod, 'terminated', (x) => containerStatus(x, 'hog')?.state?.terminated !== undefined, 30_000);
    assert.deepEqual([containerStatus(s, 'hog')?.state?.terminated?.reason, containerStatus(s, 'hog')?.state?.terminated?.exitCode, s.phase], ['OOMKilled', 137, 'Failed']);
    node.remove(pod);
  });

  void it('activeDeadlineSeconds fails the pod with DeadlineExceeded and kills its containers', async () => {
    const pod = node.pod('deadline', { activeDeadlineSeconds: 2, containers: [{ name: 'app', image: busybox, command: ['sh', '-c', SERVE] }] });
    node.run(pod);
    await node.waitStatus(pod, 'running', (x) => x.phase === 'Running');
    const failed: PodStatus = await node.waitStatus(pod, 'DeadlineExceeded', (x) => x.phase === 'Failed', 15_000);
    assert.deepEqual([failed.reason, failed.message], ['DeadlineExceeded', 'Pod was active on the node longer than the specified deadline']);
    const elapsed = Date.now() - Date.parse(failed.startTime ?? '');
    assert.ok(elapsed >= 1500 && elapsed < 8000, `failed ${elapsed} ms after the start`);
    const killed = await node.waitStatus(pod, 'the container killed', (x) => containerStatus(x, 'app')?.state?.terminated !== undefined);
    assert.deepEqual([killed.phase, killed.reason, conditionOf(killed, 'Ready')], ['Failed', 'DeadlineExceeded', 'False']);
    assert.ok(node.eventsOf(pod).includes('DeadlineExceeded: Pod was active on the node longer than the specified deadline'));
    const sandbox = await node.runtime.getPodStatus(pod.metadata.uid, 'deadline', 'healthy');
    assert.equal(sandbox.sandboxes[0]?.state, 'notready');
    node.remove(pod);
  });
});

/**
 * Sidecars (init containers with restartPolicy Always, SidecarContainers gate on) on real
 * containers: started before the next init container, kept running beside the containers
 * (restarted when they exit, whatever the pod's restart policy), their readiness part of the
 * pod's, stopped after the containers; and a pod whose containers completed finishing with
 * its sidecar stopped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import { waitFor } from '../helpers/wait.js';
import { conditionOf, containerStatus, startHealthyNode, type HealthyNode } from './healthy-harness.js';

const SIDECAR = 'trap "exit 0" TERM; touch /work/up; while true; do sleep 0.2; done';
const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.2; done';
/** Ignores TERM: only the kill at the end of the grace period stops it. */
const STUBBORN = 'trap "" TERM; while true; do sleep 0.2; done';

void describe('sidecar containers on real containers', { timeout: 300_000 }, () => {
  let node: HealthyNode;
  let busybox = '';
  before(async () => {
    node = await startHealthyNode({ sidecarContainers: true });
    busybox = node.ctrd.images.busybox;
  });
  after(async () => {
    await node.stop();
  });

  void it('a sidecar starts before the next init container, keeps running, is restarted, and stops after the containers', async () => {
    const work = [{ name: 'work', mountPath: '/work' }];
    const pod = node.pod('sidecar', {
      restartPolicy: 'Never',
      volumes: [{ name: 'work', emptyDir: {} }],
      initContainers: [
        {
          name: 'proxy', image: busybox, restartPolicy: 'Always', command: ['sh', '-c', SIDECAR], volumeMounts: work,
          readinessProbe: { exec: { command: ['test', '-f', '/work/up'] }, periodSeconds: 1 },
        },
        // Fails (and with Never fails the pod) unless the sidecar runs already.
        { name: 'check', image: busybox, command: ['sh', '-c', 'sleep 0.5; test -f /work/up'], volumeMounts: work },
      ],
      // Killed only at the end of its 2 s grace period: a sidecar stopped after it finishes
      // seconds later, which the status's whole-second times show (stopped together, before).
      containers: [{ name: 'main', image: busybox, command: ['sh', '-c', STUBBORN], volumeMounts: work }],
    });
    node.run(pod);
    let s = await node.waitStatus(pod, 'Ready', (x) => conditionOf(x, 'Ready') === 'True');
    assert.equal(s.phase, 'Running');
    assert.equal(conditionOf(s, 'Initialized'), 'True');
    const proxy = containerStatus(s, 'proxy');
    assert.deepEqual([proxy?.state?.running !== undefined, proxy?.started, proxy?.ready], [true, true, true]);
    assert.equal(containerStatus(s, 'check')?.state?.terminated?.exitCode, 0);
    assert.equal(containerStatus(s, 'check')?.ready, true, 'a completed init container is ready, as upstream');

    await node.exec(pod, 'proxy', ['kill', '1']);
    s = await node.waitStatus(pod, 'the sidecar restarted', (x) => containerStatus(x, 'proxy')?.restartCount === 1 && containerStatus(x, 'proxy')?.state?.running !== undefined, 20_000);
    assert.equal(s.phase, 'Running', 'a restarting sidecar does not take the pod back to Pending');
    assert.equal(containerStatus(s, 'check')?.restartCount, 0, 'the regular init container did not run again');
    assert.equal(containerStatus(s, 'main')?.restartCount, 0);

    // The worker removes the containers as soon as they have stopped: the status it publishes
    // after the kill is the lasting record (a poll of the runtime can miss the stopped state).
    let stopped: PodStatus | undefined;
    const unsubscribe = node.status.onChange((uid, x) => {
      const ended = (name: string) => containerStatus(x, name)?.state?.terminated !== undefined;
      if (uid === pod.metadata.uid && ended('main') && ended('proxy')) stopped ??= x;
    });
    let finished: PodStatus;
    try {
      node.remove(pod);
      finished = await waitFor('everything stopped in the status', () => stopped, { timeoutMs: 20_000 });
    } finally {
      unsubscribe();
    }
    const main = containerStatus(finished, 'main')?.state?.terminated?.finishedAt ?? '';
    const sidecar = containerStatus(finished, 'proxy')?.state?.terminated?.finishedAt ?? '';
    assert.ok(Date.parse(main) <= Date.parse(sidecar), `main finished at ${main}, the sidecar at ${sidecar}`);
    assert.deepEqual(['main', 'proxy'].map((c) => containerStatus(finished, c)?.state?.terminated?.exitCode), [137, 0]);
    const killing = node.eventsOf(pod).filter((e) => e.startsWith('Killing'));
    assert.deepEqual(killing.slice(-2), ['Killing: Stopping container main', 'Killing: Stopping container proxy']);
  });

  void it('once the containers completed (restartPolicy Never), the sidecar is stopped and the pod Succeeded', async () => {
    const pod = node.pod('job', {
      restartPolicy: 'Never',
      initContainers: [{ name: 'logger', image: busybox, restartPolicy: 'Always', command: ['sh', '-c', SERVE] }],
      containers: [{ name: 'task', image: busybox, command: ['sh', '-c', 'sleep 1; echo done'] }],
    });
    node.run(pod);
    await node.waitStatus(pod, 'the sidecar running', (x) => containerStatus(x, 'logger')?.state?.running !== undefined);
    const s = await node.waitStatus(pod, 'Succeeded', (x) => x.phase === 'Succeeded', 20_000);
    assert.equal(containerStatus(s, 'task')?.state?.terminated?.exitCode, 0);
    await node.waitStatus(pod, 'the sidecar stopped', (x) => containerStatus(x, 'logger')?.state?.terminated !== undefined);
    node.remove(pod);
  });

  void it('a sidecar with a startup probe holds the next init container until it started', async () => {
    const pod = node.pod('slow-sidecar', {
      volumes: [{ name: 'work', emptyDir: {} }],
      initContainers: [
        {
          name: 'slow', image: busybox, restartPolicy: 'Always', command: ['sh', '-c', `sleep 1.5; ${SIDECAR}`], volumeMounts: [{ name: 'work', mountPath: '/work' }],
          startupProbe: { exec: { command: ['test', '-f', '/work/up'] }, periodSeconds: 1, failureThreshold: 30 },
        },
        { name: 'after', image: busybox, command: ['test', '-f', '/work/up'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
      ],
      containers: [{ name: 'main', image: busybox, command: ['sh', '-c', SERVE] }],
    });
    node.run(pod);
    const pending = await node.waitStatus(pod, 'the sidecar running, not started', (x) => containerStatus(x, 'slow')?.state?.running !== undefined && containerStatus(x, 'slow')?.started === false);
    assert.deepEqual([containerStatus(pending, 'after')?.state?.waiting?.reason, pending.phase, conditionOf(pending, 'Initialized')], ['PodInitializing', 'Pending', 'False']);
    const s = await node.waitStatus(pod, 'Ready', (x) => conditionOf(x, 'Ready') === 'True', 20_000);
    assert.deepEqual([containerStatus(s, 'after')?.state?.terminated?.exitCode, containerStatus(s, 'after')?.restartCount], [0, 0], 'it ran once, after the sidecar started');
    node.remove(pod);
  });
});

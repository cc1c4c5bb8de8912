import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { PodFailure } from '../podworkers/index.js';
import { createShutdownManager, NODE_SHUTTING_DOWN, type ShutdownManagerOptions } from './manager.js';
import { shutdownPeriods } from './periods.js';
import { FakeLogind } from './testing.js';

const pod = (name: string, priority: number, grace?: number): NodePod => ({
  metadata: { uid: name, name, namespace: 'default' },
  spec: { containers: [], priority, ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }) },
});

interface Kill { pod: string; grace: number; at: number; failure: PodFailure }

function setup(pods: NodePod[], extra: Partial<ShutdownManagerOptions> = {}, exitAfterMs: (pod: string) => number = () => 0) {
  const clock = new FakeClock(0);
  const logind = new FakeLogind();
  const logger = new FakeLogger();
  const kills: Kill[] = [];
  const done: string[] = [];
  const events: string[] = [];
  let statusRequests = 0;
  const manager = createShutdownManager({
    periods: shutdownPeriods({ shutdownGracePeriod: 30e9, shutdownGracePeriodCriticalPods: 10e9, shutdownGracePeriodByPodPriority: [] }),
    connect: () => Promise.resolve(logind),
    clock, logger,
    activePods: () => pods,
    killPod: (p, grace, failure) => {
      kills.push({ pod: p.metadata.name, grace, at: clock.now(), failure });
      // The pod's containers stop after what the test says, at most its grace period.
      return clock.sleep(Math.min(exitAfterMs(p.metadata.name), grace * 1000)).then(() => { done.push(p.metadata.name); });
    },
    onNodeEvent: (_type, reason, message) => { events.push(`${reason}: ${message}`); },
    onShuttingDown: () => { statusRequests++; },
    ...extra,
  });
  return { clock, logind, logger, manager, kills, done, events, statusRequests: () => statusRequests };
}

void describe('the node shutdown manager', () => {
  void it('raises a too short InhibitDelayMaxSec to the whole period and takes a delay lock', async () => {
    const t = setup([]);
    await t.manager.start();
    assert.deepEqual(t.logind.overrides, [30]);
    assert.equal(t.logind.held, 1);
    assert.equal(t.manager.problem(), undefined);
    await t.manager.stop();
    assert.equal(t.logind.held, 0);
    assert.equal(t.logind.closed, true);
  });

  void it('warns once and runs on when logind is missing or keeps the delay too short', async () => {
    const missing = setup([], { connect: () => Promise.reject(new Error('systemd-logind (org.freedesktop.login1 on the system D-Bus at unix:path=/x) cannot be reached: ENOENT')) });
    await missing.manager.start();
    const warnings = missing.logger.lines.filter((l) => l.level === 'warn');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]?.msg ?? '', /Graceful node shutdown is configured \(30s\) but cannot work: systemd-logind \(org\.freedesktop\.login1/);
    assert.equal(missing.clock.pending().length, 0, 'no retry at start, as upstream');

    const short = setup([]);
    short.logind.overrideIgnored = true;
    await short.manager.start();
    assert.match(short.logger.lines.find((l) => l.level === 'warn')?.msg ?? '', /InhibitDelayMaxSec stays 5s after the override, less than the shutdown grace period 30s/);
    assert.equal(short.logind.held, 0);
    assert.equal(short.logind.closed, true);
  });

  void it('on shutdown: NotReady, refuses pods, kills lowest priority first within its share, critical pods last, then releases the lock', async () => {
    const pods = [pod('critical', 2_000_001_000, 30), pod('web', 0, 60), pod('batch', 100, 3)];
    // web ignores SIGTERM (killed at the end of its share); batch and critical stop at once.
    const t = setup(pods, {}, (name) => (name === 'web' ? 60_000 : 500));
    await t.manager.start();
    t.logind.prepareForShutdown(true);
    assert.equal(t.manager.problem(), NODE_SHUTTING_DOWN);
    assert.deepEqual(t.manager.admit(pod('new', 0)), { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' });
    assert.equal(t.statusRequests(), 1);
    assert.deepEqual(t.events, ['NodeShutdown: Shutdown manager detected shutdown event']);
    await settle();
    assert.deepEqual(t.kills.map((k) => [k.pod, k.grace, k.at]), [['web', 20, 0], ['batch', 3, 0]], 'regular pods first; a shorter own grace period wins');
    assert.deepEqual(t.kills[0]?.failure, { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.', disruptionReason: 'TerminationByNodeagent' });
    await t.clock.advance(19_999);
    assert.equal(t.kills.length, 2, 'the critical group waits for the regular one');
    assert.equal(t.logind.held, 1);
    await t.clock.advance(1);
    await settle();
    assert.deepEqual(t.kills.map((k) => [k.pod, k.grace, k.at]).slice(2), [['critical', 10, 20_000]]);
    await t.clock.advance(500);
    await settle();
    assert.deepEqual(t.done, ['batch', 'web', 'critical']);
    assert.equal(t.logind.held, 0, 'the lock is released once every group is done');
    await t.manager.stop();
  });

  void it('moves on to the next group as soon as every pod of a group stopped', async () => {
    const t = setup([pod('a', 0), pod('b', 2e9)], {}, () => 2_000);
    await t.manager.start();
    t.logind.prepareForShutdown(true);
    await settle();
    await t.clock.advance(2_000);
    await settle();
    assert.deepEqual(t.kills.map((k) => [k.pod, k.at]), [['a', 0], ['b', 2_000]]);
    await t.manager.stop();
  });

  void it('takes the lock again when the shutdown is cancelled', async () => {
    const t = setup([]);
    await t.manager.start();
    t.logind.prepareForShutdown(true);
    await settle();
    assert.equal(t.logind.held, 0);
    t.logind.prepareForShutdown(false);
    await settle();
    assert.equal(t.manager.problem(), undefined);
    assert.equal(t.logind.held, 1);
    assert.equal(t.logind.inhibits, 2);
    assert.deepEqual(t.events.at(-1), 'NodeShutdown: Shutdown manager detected shutdown cancellation');
    await t.manager.stop();
  });

  void it('watches again a second after the bus connection ends', async () => {
    const t = setup([]);
    await t.manager.start();
    t.logind.disconnect();
    assert.equal(t.logind.inhibits, 1);
    await t.clock.advance(999);
    assert.equal(t.logind.inhibits, 1);
    await t.clock.advance(1);
    await settle();
    assert.equal(t.logind.inhibits, 2);
    assert.ok(t.logger.lines.some((l) => l.level === 'error' && /watching again/.test(l.msg)));
    await t.manager.stop();
  });
});

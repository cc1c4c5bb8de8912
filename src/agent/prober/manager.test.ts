import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import { FakeClock } from '../../api/fake-clock.js';
import { LogRoot } from '../logging/index.js';
import { createProberManager } from './manager.js';
import { createProberMetrics } from './metrics.js';
import type { ProbeOutcome, ProbeResultChange, ProbedContainer, ProberManager } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

/** The delays of the probe timers waiting, soonest first. */
const waits = (clock: FakeClock): number[] => clock.pending().map((t) => t.dueAt - clock.now());

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('prober-test');

interface Env {
  time: FakeClock;
  prober: ProberManager;
  runs: string[];
  changes: ProbeResultChange[];
  events: string[];
  /** Outcome of the next probes, by probe type (default success). */
  outcomes: Map<string, ProbeOutcome['result']>;
}

function env(): Env {
  const time = new FakeClock(1_000_000);
  const runs: string[] = [];
  const changes: ProbeResultChange[] = [];
  const events: string[] = [];
  const outcomes = new Map<string, ProbeOutcome['result']>();
  const prober = createProberManager({
    exec: { execSync: () => Promise.reject(new Error('unused')) },
    logger, clock: time, metrics: createProberMetrics(),
    onEvent: (e) => events.push(`${e.reason}: ${e.message}`),
    runProbe: (probe) => {
      const kind = probe.exec?.command?.[0] ?? 'unknown';
      runs.push(kind);
      return Promise.resolve({ result: outcomes.get(kind) ?? 'success', output: `${kind} said so` });
    },
  });
  prober.onResult((c) => changes.push(c));
  return { time, prober, runs, changes, events, outcomes };
}

const probeOf = (kind: string, extra: Probe = {}): Probe => ({ exec: { command: [kind] }, periodSeconds: 1, failureThreshold: 2, ...extra });

function pod(container: Partial<Container>): NodePod {
  return { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'busybox', ...container }] } };
}

function running(id: string, startedAt: number, state: ProbedContainer['state'] = 'running'): ProbedPodStateLike {
  return { podIPs: ['10.0.0.5'], containers: [{ id, name: 'app', state, startedAt, init: false }] };
}
type ProbedPodStateLike = Parameters<ProberManager['updatePod']>[1];

void describe('prober workers', () => {
  void it('readiness: not ready until a success, unready after failureThreshold failures in a row, with events and result changes', async () => {
    const e = env();
    const p = pod({ readinessProbe: probeOf('ready') });
    e.prober.updatePod(p, running('c1', e.time.now()));
    assert.deepEqual([...e.prober.readiness('u1')], [['app', false]], 'failure until the first probe');
    await e.time.advance(0);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', true]]);
    assert.deepEqual(e.changes.map((c) => `${c.probeType}=${c.result}`), ['Readiness=success']);
    assert.deepEqual(waits(e.time), [1000], 'the next probe one period (periodSeconds) later');
    e.outcomes.set('ready', 'failure');
    await e.time.advance(1000);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', true]], 'one failure is below the threshold');
    await e.time.advance(1000);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', false]]);
    assert.deepEqual(e.events, ['Unhealthy: Readiness probe failed: ready said so', 'Unhealthy: Readiness probe failed: ready said so']);
    assert.equal(e.runs.length, 3, 'one run per period, no busy loop');
    e.prober.removePod('u1');
    assert.deepEqual(waits(e.time), [], 'removing the pod cancels its timer');
    await e.time.advance(5000);
    assert.equal(e.runs.length, 3, 'stopped');
  });

  void it('ends each wait on a multiple of 100 ms, so that probes due about the same time wake the process once', async () => {
    const e = env();
    e.time.set(1_000_050);
    e.prober.updatePod(pod({ readinessProbe: probeOf('ready') }), running('c1', e.time.now()));
    await e.time.advance(0);
    assert.equal(e.runs.length, 1, 'a trigger is never rounded');
    assert.deepEqual(waits(e.time), [1050], 'one period, rounded up to the next multiple of 100 ms');
    await e.time.advance(1050);
    assert.equal(e.runs.length, 2);
    assert.deepEqual(waits(e.time), [1000]);
    e.prober.removePod('u1');
  });

  void it('readiness follows the container: a stopped instance is unready at once', async () => {
    const e = env();
    const p = pod({ readinessProbe: probeOf('ready') });
    e.prober.updatePod(p, running('c1', e.time.now()));
    await e.time.advance(0);
    e.prober.updatePod(p, running('c1', e.time.now(), 'exited'));
    assert.deepEqual([...e.prober.readiness('u1')], [['app', false]]);
    await e.time.advance(3000);
    assert.equal(e.runs.length, 1, 'nothing probes an exited instance');
  });

  void it('liveness: a failure at the threshold is reported for that instance, then the worker holds until a new one', async () => {
    const e = env();
    const p = pod({ livenessProbe: probeOf('live', { initialDelaySeconds: 2 }) });
    e.prober.updatePod(p, running('c1', e.time.now()));
    await e.time.advance(0);
    assert.deepEqual(waits(e.time), [2000], 'the first probe initialDelaySeconds after the start');
    await e.time.advance(1500);
    assert.deepEqual(e.runs, [], 'initialDelaySeconds holds the first probe back');
    e.outcomes.set('live', 'failure');
    await e.time.advance(1000);
    assert.equal(e.prober.failedProbe('c1'), undefined);
    await e.time.advance(1000);
    assert.deepEqual(e.prober.failedProbe('c1'), { probe: 'liveness' });
    assert.deepEqual(e.changes.map((c) => `${c.containerId}:${c.probeType}=${c.result}`), ['c1:Liveness=failure']);
    await e.time.advance(5000);
    assert.equal(e.runs.length, 2, 'on hold');
    e.outcomes.set('live', 'success');
    e.prober.updatePod(p, { podIPs: [], containers: [{ id: 'c2', name: 'app', state: 'running', startedAt: e.time.now(), init: false }, { id: 'c1', name: 'app', state: 'exited', startedAt: 1, init: false }] });
    assert.equal(e.prober.failedProbe('c2'), undefined, 'a new instance starts healthy');
    await e.time.advance(2500);
    assert.equal(e.runs.length, 3);
  });

  void it('startup holds liveness and readiness back; its success wakes them; its failure is reported', async () => {
    const e = env();
    const p = pod({ startupProbe: probeOf('start'), readinessProbe: probeOf('ready', { periodSeconds: 10 }), livenessProbe: probeOf('live', { periodSeconds: 10 }) });
    e.outcomes.set('start', 'failure');
    e.prober.updatePod(p, running('c1', e.time.now()));
    await e.time.advance(0);
    assert.deepEqual(e.runs, ['start']);
    assert.equal(e.prober.started('c1'), false);
    assert.deepEqual([...e.prober.startedContainers('u1')], [['app', false]]);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', false]]);
    e.outcomes.set('start', 'success');
    await e.time.advance(1000);
    assert.equal(e.prober.started('c1'), true);
    assert.deepEqual(e.runs.slice(0, 2), ['start', 'start']);
    assert.deepEqual([...e.runs.slice(2)].sort(), ['live', 'ready'], 'woken at once, not after their 10 s period');
    assert.deepEqual([...e.prober.readiness('u1')], [['app', true]]);
    await e.time.advance(5000);
    assert.equal(e.runs.filter((r) => r === 'start').length, 2, 'a startup probe stops once it succeeded');

    const f = env();
    f.outcomes.set('start', 'failure');
    f.prober.updatePod(p, running('c9', f.time.now()));
    await f.time.advance(1000);
    assert.deepEqual(f.prober.failedProbe('c9'), { probe: 'startup' });
    assert.ok(!f.runs.includes('live') && !f.runs.includes('ready'));
  });

  void it('successThreshold: readiness needs that many successes in a row; unknown keeps the result', async () => {
    const e = env();
    const p = pod({ readinessProbe: probeOf('ready', { successThreshold: 2 }) });
    e.prober.updatePod(p, running('c1', e.time.now()));
    await e.time.advance(0);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', false]]);
    e.outcomes.set('ready', 'unknown');
    await e.time.advance(1000);
    e.outcomes.set('ready', 'success');
    await e.time.advance(1000);
    assert.deepEqual([...e.prober.readiness('u1')], [['app', true]]);
    assert.deepEqual(e.events, ['Unhealthy: Readiness probe errored: ready said so']);
  });

  void it('a terminating pod keeps readiness only; metrics count runs by result', async () => {
    const metrics = createProberMetrics();
    const time = new FakeClock(1_000_000);
    const runs: string[] = [];
    const prober = createProberManager({
      exec: { execSync: () => Promise.reject(new Error('unused')) }, logger, clock: time, metrics,
      runProbe: (probe) => {
        runs.push(probe.exec?.command?.[0] ?? '');
        return Promise.resolve({ result: 'success', output: '' });
      },
    });
    const p = pod({ readinessProbe: probeOf('ready'), livenessProbe: probeOf('live') });
    prober.updatePod(p, running('c1', time.now()));
    await time.advance(1000);
    const text = await metrics.registry.metrics();
    assert.match(text, /nodeagent_prober_probe_total\{probe_type="Liveness",result="successful",container="app",pod="web",namespace="shop"\} 2/);
    assert.match(text, /nodeagent_prober_probe_duration_seconds_count\{probe_type="Readiness",container="app",pod="web",namespace="shop"\} 2/);
    prober.stopLivenessAndStartup('u1');
    prober.updatePod(p, running('c1', time.now()));
    runs.length = 0;
    await time.advance(2000);
    assert.deepEqual(runs, ['ready', 'ready']);
    prober.removePod('u1');
    assert.doesNotMatch(await metrics.registry.metrics(), /container="app"/);
    await prober.stop();
  });
});

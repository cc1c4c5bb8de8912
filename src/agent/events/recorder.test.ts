import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEventRecorder, type EventRecorderOptions } from './recorder.js';
import { nodeReference, podReference } from './event-object.js';
import { FINISH_MS, REFRESH_MS } from './series-cache.js';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { apiError, FakeRestClient, type RestCall } from '../orchclient/testing.js';

const START = Date.UTC(2026, 10, 22, 3, 4, 5, 123);

const POD = podReference({ metadata: { name: 'web', namespace: 'ns1', uid: 'u-1', resourceVersion: '7' } });
const EVENTS = '/apis/events.orch.io/v1/namespaces/ns1/events';
const body = (call: RestCall): Record<string, unknown> => call.body as Record<string, unknown>;

function setup(overrides: Partial<EventRecorderOptions> = {}): {
  clock: FakeClock; rest: FakeRestClient; logger: FakeLogger; recorder: ReturnType<typeof createEventRecorder>;
} {
  const clock = new FakeClock(START);
  const rest = new FakeRestClient({ now: () => clock.now() });
  const logger = new FakeLogger();
  const recorder = createEventRecorder({
    rest, reportingInstance: 'node-1', qps: 0, burst: 0, logger, clock, random: () => 0.5, ...overrides,
  });
  return { clock, rest, logger, recorder };
}

/** The writer's pending waits (tokens, retries), without the series' 6- and 30-minute timers. */
const waits = (clock: FakeClock): number[] => clock.pending().filter((t) => t.delayMs < FINISH_MS).map((t) => t.delayMs);

void describe('event recorder: writes', () => {
  void it('creates an event with upstream\'s name, time format, reporter and namespace', async () => {
    const { rest, recorder, logger } = setup();
    recorder.event(POD, 'Normal', 'Pulled', 'Pulling', 'Image pulled');
    await recorder.flush();
    assert.equal(rest.calls.length, 1);
    const call = rest.calls[0]!;
    assert.equal(call.verb, 'create');
    assert.equal(call.path, EVENTS);
    assert.equal(call.options?.exempt, true);
    const nanos = (BigInt(Date.UTC(2026, 10, 22, 3, 4, 5, 123)) * 1_000_000n).toString(16);
    assert.deepEqual(call.body, {
      apiVersion: 'events.orch.io/v1', kind: 'Event',
      metadata: { name: `web.${nanos}`, namespace: 'ns1' },
      eventTime: '2026-11-22T03:04:05.123000Z',
      reportingController: 'nodeagent', reportingInstance: 'node-1',
      action: 'Pulling', reason: 'Pulled', note: 'Image pulled', type: 'Normal',
      regarding: { kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ns1', uid: 'u-1', resourceVersion: '7' },
    });
    assert.deepEqual(logger.at('info')[0], {
      level: 'info', msg: 'Event occurred',
      fields: { object: 'ns1/web', kind: 'Pod', apiVersion: 'v1', type: 'Normal', reason: 'Pulled', action: 'Pulling', note: 'Image pulled' },
    });
    await recorder.stop();
  });

  void it('writes node events to default, and gives same-instant events distinct names', async () => {
    const { rest, recorder } = setup();
    recorder.event(nodeReference('node-1'), 'Normal', 'Starting', 'Start', 'Starting nodeagent.');
    recorder.event(nodeReference('node-1'), 'Normal', 'NodeReady', 'Ready', 'Node node-1 status is now: NodeReady');
    await recorder.flush();
    assert.deepEqual(rest.calls.map((c) => c.path), ['/apis/events.orch.io/v1/namespaces/default/events', '/apis/events.orch.io/v1/namespaces/default/events']);
    const [a, b] = rest.calls.map(body);
    assert.deepEqual(a!.regarding, { kind: 'Node', name: 'node-1', uid: 'node-1' });
    assert.notEqual((a!.metadata as { name: string }).name, (b!.metadata as { name: string }).name);
    await recorder.stop();
  });

  void it('uses the given reportingController and keeps notes within 1024 bytes', async () => {
    const { rest, recorder } = setup({ reportingController: 'orch.io/nodeagent' });
    recorder.event(POD, 'Warning', 'Failed', 'Pulling', 'é'.repeat(600));
    await recorder.flush();
    assert.equal(body(rest.calls[0]!).reportingController, 'orch.io/nodeagent');
    assert.equal(Buffer.byteLength(body(rest.calls[0]!).note as string), 1024);
    await recorder.stop();
  });

  void it('never throws and drops an event of an unknown type with an error line', async () => {
    const { rest, recorder, logger } = setup();
    assert.doesNotThrow(() => {
      recorder.event(POD, 'Bogus' as 'Normal', 'R', 'A', 'n');
      recorder.event(undefined as unknown as typeof POD, 'Normal', 'R', 'A', 'n');
    });
    await recorder.flush();
    assert.equal(rest.calls.length, 0);
    assert.equal(logger.at('error').length, 2);
    await recorder.stop();
  });
});

void describe('event recorder: series', () => {
  void it('folds repeats into a series: create, patch at the second, later ones at the end of the series', async () => {
    const { clock, rest, recorder } = setup();
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container');
    await clock.advance(10_000);
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container');
    await clock.advance(10_000);
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container');
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container');
    await recorder.flush();
    assert.deepEqual(rest.verbs(), ['create', 'patch']);
    const name = (body(rest.calls[0]!).metadata as { name: string }).name;
    assert.equal(rest.calls[1]!.path, `${EVENTS}/${name}`);
    assert.equal(rest.calls[1]!.patchType, 'strategic');
    assert.deepEqual(rest.calls[1]!.body, { series: { count: 2, lastObservedTime: '2026-11-22T03:04:15.123000Z' } });
    // Idle for 6 minutes: the next sweep (they run every 6 minutes) sends the final count.
    await clock.advance(2 * FINISH_MS);
    await recorder.flush();
    assert.deepEqual(rest.verbs(), ['create', 'patch', 'patch']);
    assert.deepEqual(rest.calls[2]!.body, { series: { count: 4, lastObservedTime: '2026-11-22T03:04:25.123000Z' } });
    assert.deepEqual(rest.objects.get(`${EVENTS}/${name}`)!.series, { count: 4, lastObservedTime: '2026-11-22T03:04:25.123000Z' });
    // After the series ended, the same event starts a new one.
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container');
    await recorder.flush();
    assert.deepEqual(rest.verbs(), ['create', 'patch', 'patch', 'create']);
    assert.equal(body(rest.calls[3]!).series, undefined);
    await recorder.stop();
  });

  void it('does not fold events that differ in note, type, reason, action or object', async () => {
    const { rest, recorder } = setup();
    recorder.event(POD, 'Warning', 'Failed', 'Pulling', 'a');
    recorder.event(POD, 'Warning', 'Failed', 'Pulling', 'b');
    recorder.event(POD, 'Normal', 'Failed', 'Pulling', 'a');
    recorder.event(POD, 'Warning', 'Other', 'Pulling', 'a');
    recorder.event(POD, 'Warning', 'Failed', 'Other', 'a');
    recorder.event(podReference({ metadata: { name: 'web', namespace: 'ns1', uid: 'u-1' } }, { name: 'app' }), 'Warning', 'Failed', 'Pulling', 'a');
    await recorder.flush();
    assert.deepEqual(rest.verbs(), ['create', 'create', 'create', 'create', 'create', 'create']);
    await recorder.stop();
  });

  void it('re-sends open series every 30 minutes (heartbeat)', async () => {
    const { clock, rest, recorder } = setup();
    for (let minute = 0; minute <= 35; minute++) {
      recorder.event(POD, 'Warning', 'Unhealthy', 'Probing', 'Liveness probe failed');
      await clock.advance(60_000);
    }
    await recorder.flush();
    const patches = rest.calls.filter((c) => c.verb === 'patch');
    assert.deepEqual(patches.map((c) => (body(c).series as { count: number }).count), [2, 30]);
    assert.equal(patches[1]!.at! - rest.calls[0]!.at!, REFRESH_MS);
    await recorder.stop();
    // stop() sends the count not yet written.
    assert.deepEqual(rest.calls.filter((c) => c.verb === 'patch').map((c) => (body(c).series as { count: number }).count), [2, 30, 36]);
  });

  void it('creates the series anew when the patch finds the event gone (404)', async () => {
    const { rest, recorder } = setup();
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'x');
    await recorder.flush();
    rest.objects.clear(); // its time to live ended
    recorder.event(POD, 'Warning', 'BackOff', 'Restarting', 'x');
    await recorder.flush();
    assert.deepEqual(rest.verbs(), ['create', 'patch', 'create']);
    assert.deepEqual((body(rest.calls[2]!).series as { count: number }).count, 2);
    assert.equal(rest.objects.size, 1);
    await recorder.stop();
  });
});

void describe('event recorder: budget and queue', () => {
  void it('paces writes with eventRecordQPS and eventBurst', async () => {
    const { clock, rest, recorder } = setup({ qps: 1, burst: 2 });
    for (let i = 0; i < 4; i++) recorder.event(POD, 'Normal', `R${i}`, 'A', 'n');
    await settle();
    assert.equal(rest.calls.length, 2);
    assert.deepEqual(waits(clock), [1000, 1000], 'each waits one second for its token');
    await clock.advance(999);
    assert.equal(rest.calls.length, 2);
    await clock.advance(1);
    assert.equal(rest.calls.length, 3);
    await clock.advance(1000);
    assert.equal(rest.calls.length, 4);
    assert.deepEqual(rest.calls.map((c) => body(c).reason), ['R0', 'R1', 'R2', 'R3']);
    await recorder.stop();
  });

  void it('reads a burst below 1 with a positive qps as 1', async () => {
    const { clock, rest, recorder } = setup({ qps: 1, burst: 0 });
    for (let i = 0; i < 3; i++) recorder.event(POD, 'Normal', `R${i}`, 'A', 'n');
    await settle();
    assert.equal(rest.calls.length, 1);
    await clock.advance(1000);
    assert.equal(rest.calls.length, 2);
    await clock.advance(1000);
    assert.equal(rest.calls.length, 3);
    await recorder.stop();
  });

  void it('refuses a negative or non-finite eventRecordQPS or eventBurst with EVENTS_INVALID_OPTIONS', () => {
    for (const [qps, burst] of [[-1, 10], [1, -1], [Number.NaN, 1], [Number.POSITIVE_INFINITY, 1]] as const) {
      assert.throws(() => setup({ qps, burst }), (err: unknown) => err instanceof OrchError && err.code === 'EVENTS_INVALID_OPTIONS' && err.category === 'invalid');
    }
  });

  void it('sends everything at once with eventRecordQPS 0 (unlimited)', async () => {
    const { rest, recorder } = setup({ qps: 0, burst: 0 });
    for (let i = 0; i < 300; i++) recorder.event(POD, 'Normal', `R${i}`, 'A', 'n');
    await settle();
    await recorder.flush();
    assert.equal(rest.calls.length, 300);
    await recorder.stop();
  });

  void it('drops the oldest queued events when the queue is full, with one warning', async () => {
    const { rest, recorder, logger } = setup({ maxQueued: 3, concurrency: 1 });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => { release = resolve; });
    rest.responders.push((call) => (body(call).reason === 'R0' ? held : undefined));
    for (let i = 0; i < 8; i++) recorder.event(POD, 'Normal', `R${i}`, 'A', 'n');
    await settle();
    release();
    await recorder.flush();
    assert.deepEqual(rest.calls.map((c) => body(c).reason), ['R0', 'R5', 'R6', 'R7']);
    assert.equal(logger.at('warn').filter((l) => l.msg.includes('queue is full')).length, 1);
    assert.equal(logger.at(4).filter((l) => l.msg.includes('Dropped event')).length, 4);
    await recorder.stop();
  });
});

void describe('event recorder: failures', () => {
  void it('retries transient failures with back-off, then succeeds', async () => {
    const { clock, rest, recorder } = setup();
    let failures = 2;
    rest.responders.push(() => (failures-- > 0 ? apiError(503, 'ServiceUnavailable') : undefined));
    recorder.event(POD, 'Normal', 'Pulled', 'Pulling', 'n');
    await settle();
    assert.equal(rest.calls.length, 1);
    assert.deepEqual(waits(clock), [500], 'the first retry 500 ms after the failure');
    await clock.advance(500);
    assert.equal(rest.calls.length, 2);
    assert.deepEqual(waits(clock), [1000], 'then 1 s');
    await clock.advance(999);
    assert.equal(rest.calls.length, 2);
    await clock.advance(1);
    assert.equal(rest.calls.length, 3);
    await recorder.flush();
    assert.equal(rest.objects.size, 1);
    await recorder.stop();
  });

  void it('gives up after the retry limit with a warning naming the event', async () => {
    const { clock, rest, recorder, logger } = setup({ retry: { attempts: 3 } });
    rest.responders.push(() => new Error('connect ECONNREFUSED'));
    recorder.event(POD, 'Normal', 'Pulled', 'Pulling', 'n');
    await clock.advance(10_000);
    await recorder.flush();
    assert.equal(rest.calls.length, 3);
    const warn = logger.at('warn').find((l) => l.msg.includes('retry limit'));
    assert.ok(warn);
    assert.match(String(warn.fields.event), /^ns1\/web\.[0-9a-f]+$/);
    await recorder.stop();
  });

  void it('drops an event the server rejects (4xx) without retrying, with a warning', async () => {
    const { rest, recorder, logger } = setup();
    rest.responders.push(() => apiError(422, 'Invalid'));
    recorder.event(POD, 'Normal', 'Pulled', 'Pulling', 'n');
    await recorder.flush();
    assert.equal(rest.calls.length, 1);
    const warn = logger.at('warn').find((l) => l.msg.includes('rejected'));
    assert.ok(warn);
    assert.match(String(warn.fields.event), /^ns1\/web\./);
    await recorder.stop();
  });

  void it('retries 429 and 409 Conflict', async () => {
    const { clock, rest, recorder } = setup();
    const errors = [apiError(429, 'TooManyRequests'), apiError(409, 'Conflict')];
    rest.responders.push(() => errors.shift());
    recorder.event(POD, 'Normal', 'Pulled', 'Pulling', 'n');
    await clock.advance(5000);
    await recorder.flush();
    assert.equal(rest.calls.length, 3);
    assert.equal(rest.objects.size, 1);
    await recorder.stop();
  });
});

void describe('event recorder: standalone and stop', () => {
  void it('only logs without an API server', async () => {
    const clock = new FakeClock(START);
    const logger = new FakeLogger();
    const recorder = createEventRecorder({ rest: undefined, reportingInstance: 'node-1', qps: 5, burst: 10, logger, clock });
    recorder.event(nodeReference('node-1'), 'Normal', 'Starting', 'Start', 'Starting nodeagent.');
    recorder.event(nodeReference('node-1'), 'Normal', 'Starting', 'Start', 'Starting nodeagent.');
    await recorder.flush();
    await recorder.stop();
    assert.equal(logger.at('info').length, 2);
    assert.deepEqual(clock.pending(), [], 'no series timers without an API server');
  });

  void it('logs at the verbosity asked for', async () => {
    const { recorder, logger } = setup({ logVerbosity: 3 });
    recorder.event(POD, 'Normal', 'R', 'A', 'n');
    assert.equal(logger.at(3).length, 1);
    assert.equal(logger.at('info').length, 0);
    await recorder.stop();
  });

  void it('stop() waits for pending writes up to its deadline, then drops the rest with a warning', async () => {
    const { clock, rest, recorder, logger } = setup({ stopTimeoutMs: 2000, concurrency: 1 });
    rest.responders.push((call) => (call.options?.signal !== undefined
      ? new Promise<void>((_resolve, reject) => {
        call.options!.signal!.addEventListener('abort', () => { reject(new Error('aborted')); });
      })
      : undefined));
    recorder.event(POD, 'Normal', 'A1', 'A', 'n');
    recorder.event(POD, 'Normal', 'A2', 'A', 'n');
    const stopped = recorder.stop();
    await settle();
    assert.deepEqual(clock.pending().map((t) => [t.delayMs, t.keepAlive]), [[2000, true]], 'the stop deadline; the series timers are gone');
    await clock.advance(2000);
    await stopped;
    assert.equal(rest.calls.length, 1);
    assert.deepEqual(logger.at('warn').map((l) => [l.msg, l.fields.dropped]), [['Event recorder stopped before every event was written', 1]]);
    assert.deepEqual(clock.pending(), []);
    recorder.event(POD, 'Normal', 'After', 'A', 'n');
    await settle();
    assert.equal(rest.calls.length, 1);
    await recorder.stop(); // idempotent
  });
});

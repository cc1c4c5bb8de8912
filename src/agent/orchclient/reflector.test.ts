import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { createReflector, type ReflectorOptions } from './reflector.js';
import type { ObjectList, RestCallOptions } from './rest-types.js';
import { errorFromResponse } from './status.js';
import { FakeRestClient } from './testing.js';

interface Obj { metadata: { name?: string; resourceVersion?: string } }
type Query = NonNullable<RestCallOptions['query']>;

/** The shared fake, whose lists answer from a queue (pages, errors) instead of its store. */
class FakeRest extends FakeRestClient {
  readonly listAnswers: (ObjectList<Obj> | Error)[] = [];

  /** The query of each list call, in order. */
  get listQueries(): Query[] {
    return this.callsOf('list').map((c) => c.options?.query ?? {});
  }

  override list<T>(path: string, o?: RestCallOptions): Promise<ObjectList<T>> {
    this.calls.push({ verb: 'list', path, ...(o === undefined ? {} : { options: o }) });
    const next = this.listAnswers.shift() ?? new OrchError('ORCHCLIENT_UNAVAILABLE', 'unavailable', 'no list answer queued');
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next as unknown as ObjectList<T>);
  }
}

/** Each line as the tests read it: `<level> <message>`. */
const texts = (logger: FakeLogger): string[] => logger.lines.map((l) => `${l.level} ${l.msg}`);

/**
 * Polls until `cond` holds, moving `clock` to its next timer (a back-off pause) whenever the
 * reflector has nothing else to do; fails after 2 s.
 */
async function until(what: string, cond: () => boolean, clock?: FakeClock): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await settle(1);
    const next = clock?.untilNext();
    if (!cond() && next !== undefined) await clock?.advance(next);
  }
}

const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });
const listOf = (rv: string, ...items: Obj[]): ObjectList<Obj> => ({ metadata: { resourceVersion: rv }, items });
const unavailable = (): OrchError => new OrchError('ORCHCLIENT_UNAVAILABLE', 'unavailable', 'connect ECONNREFUSED');

function setup(extra: Partial<ReflectorOptions<Obj>> = {}): {
  rest: FakeRest; lists: [string[], string][]; events: string[]; clock: FakeClock; logger: FakeLogger; reflector: ReturnType<typeof createReflector<Obj>>;
} {
  const rest = new FakeRest();
  const lists: [string[], string][] = [];
  const events: string[] = [];
  const clock = new FakeClock();
  const logger = new FakeLogger();
  const reflector = createReflector<Obj>({
    rest, path: '/api/v1/pods', query: { fieldSelector: 'spec.nodeName=n1' }, logger,
    onList: (items, rv) => { lists.push([items.map((i) => i.metadata.name ?? ''), rv]); },
    onEvent: (e) => { events.push(`${e.type} ${e.object.metadata.name ?? ''}`); },
    clock,
    random: () => 0,
    ...extra,
  });
  return { rest, lists, events, clock, logger, reflector };
}

void describe('the reflector', () => {
  void it('lists, then watches from the list\'s resourceVersion; resumes from the last one seen', async () => {
    const { rest, lists, events, clock, reflector } = setup();
    rest.listAnswers.push(listOf('10', obj('a', '7')));
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    assert.deepEqual(lists, [[['a'], '10']]);
    assert.equal(reflector.hasSynced(), true);
    assert.equal(rest.listQueries[0]?.fieldSelector, 'spec.nodeName=n1');
    assert.equal(rest.listQueries.at(0)?.limit, 500);
    const w1 = rest.watches[0]!;
    assert.equal(w1.query.resourceVersion, '10');
    assert.equal(w1.query.allowWatchBookmarks, true);
    assert.equal(w1.query.fieldSelector, 'spec.nodeName=n1');
    assert.ok(Number(w1.query.timeoutSeconds) >= 300);
    w1.emit({ type: 'ADDED', object: obj('b', '11') });
    w1.emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } });
    assert.deepEqual(events, ['ADDED b'], 'bookmarks are not events');
    assert.equal(reflector.lastSyncResourceVersion(), '15');
    // The server ends the watch (timeoutSeconds): reopened at once from the bookmark's version.
    w1.finish({ reason: 'closed' });
    await until('the second watch', () => rest.watches.length === 2);
    assert.equal(rest.watches[1]?.query.resourceVersion, '15');
    assert.deepEqual(clock.delays, []);
    rest.watches[1].emit({ type: 'MODIFIED', object: obj('b', '16') });
    // A disconnect: reopened from the last version after a pause, without listing again.
    rest.watches[1].finish({ reason: 'error', error: unavailable() });
    await until('the third watch', () => rest.watches.length === 3, clock);
    assert.equal(rest.watches[2]?.query.resourceVersion, '16');
    assert.deepEqual(clock.delays, [800]);
    assert.equal(lists.length, 1);
    assert.deepEqual(events, ['ADDED b', 'MODIFIED b']);
    await reflector.stop();
    assert.equal(rest.watches.at(2)?.ended, true);
  });

  void it('lists again on a 410 ERROR event or a 410 answer, then watches from the new list', async () => {
    const { rest, lists, logger, reflector } = setup();
    rest.listAnswers.push(listOf('10', obj('a', '7')), listOf('50', obj('a', '7'), obj('c', '44')), listOf('60'));
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    rest.watches[0]!.emit({ type: 'ERROR', object: { kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 10' } });
    rest.watches[0]!.finish({ reason: 'closed' });
    await until('the watch after the re-list', () => rest.watches.length === 2);
    assert.deepEqual(lists, [[['a'], '10'], [['a', 'c'], '50']]);
    assert.equal(rest.watches[1]?.query.resourceVersion, '50');
    rest.watches[1].emit({ type: 'ADDED', object: obj('d', '55') });
    rest.watches[1].finish({ reason: 'error', error: errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410,"reason":"Gone","message":"gone"}') });
    await until('the watch after the second re-list', () => rest.watches.length === 3);
    assert.deepEqual(lists.at(-1), [[], '60']);
    assert.equal(rest.watches[2]?.query.resourceVersion, '60');
    assert.equal(logger.matching('too old; listing again').length, 2);
    await reflector.stop();
  });

  void it('backs off exponentially while the server is down, logs the outage once, and resets after success', async () => {
    const { rest, lists, clock, logger, reflector } = setup({ backoff: { initialMs: 800, maxMs: 30_000, jitter: 0.5 }, random: () => 1 });
    for (let i = 0; i < 8; i++) rest.listAnswers.push(unavailable());
    rest.listAnswers.push(listOf('10'));
    const started = clock.now();
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1, clock);
    assert.equal(reflector.hasSynced(), true);
    const pauses = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000].map((ms) => ms * 1.5);
    assert.deepEqual(clock.delays, pauses);
    assert.equal(clock.now() - started, pauses.reduce((a, b) => a + b), 'the list came after the last pause, not before');
    assert.deepEqual(texts(logger).filter((l) => !/^\d/.test(l)), ['warn /api/v1/pods: list failed; retrying with back-off', 'info /api/v1/pods: list and watch work again']);
    assert.deepEqual(lists, [[[], '10']]);
    clock.delays.length = 0;
    rest.watches[0]!.finish({ reason: 'error', error: unavailable() });
    await until('the second watch', () => rest.watches.length === 2, clock);
    rest.watches[1]!.finish({ reason: 'error', error: unavailable() });
    await until('the third watch', () => rest.watches.length === 3, clock);
    assert.deepEqual(clock.delays, [1200, 2400], 'a successful list reset the back-off');
    assert.equal(logger.at('warn').length, 2, 'one warning per outage');
    await reflector.stop();
  });

  void it('treats a watch that ends at once without events as a failure, not a tight loop', async () => {
    const { rest, clock, reflector } = setup();
    rest.listAnswers.push(listOf('10'));
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    rest.watches[0]!.finish({ reason: 'closed' });
    await until('the back-off', () => clock.pending().length === 1);
    assert.equal(rest.watches.length, 1, 'not reopened before the pause');
    await until('the second watch', () => rest.watches.length === 2, clock);
    assert.deepEqual(clock.delays, [800]);
    await clock.advance(5000);
    rest.watches[1]!.finish({ reason: 'closed' });
    await until('the third watch', () => rest.watches.length === 3);
    assert.deepEqual(clock.delays, [800], 'a watch that lasted is reopened at once');
    await reflector.stop();
  });

  void it('follows continue pages, and lists without pages when a continue token expired', async () => {
    const { rest, lists, reflector } = setup({ pageSize: 2 });
    rest.listAnswers.push(
      { metadata: { resourceVersion: '20', continue: 'p2' }, items: [obj('a', '1'), obj('b', '2')] },
      { metadata: { resourceVersion: '20', continue: 'p3' }, items: [obj('c', '3'), obj('d', '4')] },
      { metadata: { resourceVersion: '20' }, items: [obj('e', '5')] },
    );
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    assert.deepEqual(lists, [[['a', 'b', 'c', 'd', 'e'], '20']]);
    assert.deepEqual(rest.listQueries.map((q) => q.continue), [undefined, 'p2', 'p3']);
    rest.listAnswers.push(
      { metadata: { resourceVersion: '30', continue: 'q2' }, items: [obj('a', '1'), obj('b', '2')] },
      errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410,"reason":"Expired"}'),
      listOf('31', obj('a', '1'), obj('b', '2'), obj('z', '31')),
    );
    rest.watches[0]!.finish({ reason: 'error', error: errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410}') });
    await until('the second watch', () => rest.watches.length === 2);
    assert.deepEqual(lists.at(-1), [['a', 'b', 'z'], '31']);
    assert.equal(rest.listQueries.at(-1)?.limit, undefined);
    assert.equal(rest.watches[1]?.query.resourceVersion, '31');
    await reflector.stop();
  });

  void it('lists at "0" first, at the last resourceVersion seen after a 410, and at "" after that list was refused', async () => {
    const { rest, lists, clock, reflector } = setup();
    const tooLarge = errorFromResponse('GET', '/api/v1/pods', 504, JSON.stringify({
      kind: 'Status', code: 504, reason: 'Timeout', message: 'Timeout: Too large resource version: 12, current: 11',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    }));
    rest.listAnswers.push(listOf('10', obj('a', '7')), tooLarge, listOf('13', obj('a', '7')), listOf('20'));
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    // Upstream: "0" with the page size (a watch cache answers it whole, a store pages it).
    assert.deepEqual([rest.listQueries[0]?.resourceVersion, rest.listQueries[0]?.limit], ['0', 500]);
    rest.watches[0]!.emit({ type: 'BOOKMARK', object: obj('', '12') });
    rest.watches[0]!.finish({ reason: 'error', error: errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410,"reason":"Expired"}') });
    await until('the watch after the fallback list', () => rest.watches.length === 2);
    // The relist at the last resourceVersion, not paged (a watch cache answers "N" only without a
    // limit), refused as too large: at once again, consistent ("") and paged.
    assert.deepEqual(rest.listQueries.slice(1).map((q) => [q.resourceVersion, q.limit]), [['12', undefined], [undefined, 500]]);
    assert.deepEqual(lists.at(-1), [['a'], '13']);
    assert.equal(rest.watches[1]?.query.resourceVersion, '13');
    rest.watches[1].finish({ reason: 'error', error: errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410,"reason":"Expired"}') });
    await until('the third watch', () => rest.watches.length === 3, clock);
    assert.deepEqual([rest.listQueries[3]?.resourceVersion, rest.listQueries[3]?.limit], ['13', undefined], 'a successful list makes the resourceVersion available again');
    await reflector.stop();
  });

  void it('keeps paging relists when the list at "0" came in pages (the server has no watch cache)', async () => {
    const { rest, reflector } = setup();
    rest.listAnswers.push(
      { metadata: { resourceVersion: '20', continue: 'p2' }, items: [obj('a', '1')] },
      listOf('20', obj('b', '2')),
      listOf('25'),
    );
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1);
    rest.watches[0]!.finish({ reason: 'error', error: errorFromResponse('GET', '/api/v1/pods', 410, '{"kind":"Status","code":410}') });
    await until('the second watch', () => rest.watches.length === 2);
    assert.deepEqual(rest.listQueries.map((q) => [q.resourceVersion, q.limit, q.continue]), [['0', 500, undefined], [undefined, 500, 'p2'], ['20', 500, undefined]]);
    await reflector.stop();
  });

  void it('survives its consumers\' exceptions and stops cleanly during a pause', async () => {
    let failList = true;
    const { rest, events, logger, clock, reflector } = setup({
      onList: () => { if (failList) { failList = false; throw new Error('store broken'); } },
      onEvent: (e) => { if (e.object.metadata.name === 'bad') throw new Error('handler broken'); events.push(e.object.metadata.name ?? ''); },
    });
    rest.listAnswers.push(listOf('1'), listOf('2'));
    reflector.start();
    await until('the first watch', () => rest.watches.length === 1, clock);
    assert.deepEqual(clock.delays, [800], 'the failed list was retried after a pause');
    assert.equal(rest.watches[0]?.query.resourceVersion, '2');
    rest.watches[0].emit({ type: 'ADDED', object: obj('bad', '3') });
    rest.watches[0].emit({ type: 'ADDED', object: obj('good', '4') });
    assert.deepEqual(events, ['good']);
    assert.equal(reflector.lastSyncResourceVersion(), '4');
    assert.ok(logger.at('error').some((l) => l.msg.includes('consumer failed')));
    await reflector.stop();
    await reflector.stop();

    // Stopped while pausing between failed lists: stop() cuts the pause short, nothing throws.
    const never = setup();
    never.reflector.start();
    await until('the pause after the first list', () => never.clock.pending().length === 1);
    await never.reflector.stop();
    assert.deepEqual(never.clock.pending(), []);
    assert.equal(never.reflector.hasSynced(), false);
    assert.equal(never.rest.listQueries.length, 1);
  });
});

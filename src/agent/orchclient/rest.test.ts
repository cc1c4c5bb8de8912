import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { FakeLogger } from '../logging/testing.js';
import type { RateLimiter } from './rate-limit.js';
import { createRestClient, withQuery } from './rest.js';
import type { WatchEvent } from './rest-types.js';
import { isResourceExpired, statusOf } from './status.js';

interface Seen { method: string; url: string; contentType: string; accept: string; body: string }

const seen: Seen[] = [];
let flaky = 0;
let busy = 0;
let server: ReturnType<typeof createServer>;
let url: string;
let releaseHang: () => void = () => undefined;

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details: { name: 'x', kind: 'configmaps' } }));
}

function handler(req: IncomingMessage, res: ServerResponse, body: string): void {
  const u = new URL(req.url ?? '/', 'http://x');
  seen.push({ method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'] ?? '', accept: req.headers.accept ?? '', body });
  if (u.searchParams.get('watch') === 'true') {
    if (u.pathname === '/gone') { status(res, 410, 'Expired', 'too old resource version'); return; }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (u.pathname === '/hang') {
      res.write('{"type":"ADDED","object":{"metadata":{"name":"h"}}}\n');
      releaseHang = () => res.end();
      return;
    }
    const lines = Buffer.from([
      { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '2' } } },
      { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '3' }, data: { k: 'ü' } } },
      { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } },
    ].map((e) => JSON.stringify(e)).join('\n') + '\n');
    // Odd-sized chunks: lines (and the two-byte ü) are split between writes.
    let i = 0;
    const next = (): void => {
      if (i >= lines.length) {
        res.end();
        return;
      }
      res.write(lines.subarray(i, i + 5));
      i += 5;
      setImmediate(next);
    };
    next();
    return;
  }
  if (u.pathname === '/retry-after') {
    busy += 1;
    if (busy === 1) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' }).end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'too many requests' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  if (u.pathname === '/exists') { status(res, 409, 'AlreadyExists', 'configmaps "x" already exists'); return; }
  if (u.pathname === '/conflict') { status(res, 409, 'Conflict', 'the object has been modified'); return; }
  if (u.pathname === '/missing') { status(res, 404, 'NotFound', 'configmaps "x" not found'); return; }
  if (u.pathname === '/flaky' && flaky++ % 3 !== 2) { status(res, 500, 'InternalError', 'boom'); return; }
  if (u.pathname === '/busy' && flaky++ % 2 === 0) { status(res, 429, 'TooManyRequests', 'slow down'); return; }
  if (u.pathname === '/list') {
    res.writeHead(200).end(JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: null }));
    return;
  }
  res.writeHead(200).end(JSON.stringify({ echo: { method: req.method, body: body === '' ? null : JSON.parse(body) as unknown } }));
}

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => { handler(req, res, Buffer.concat(chunks).toString('utf8')); });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  releaseHang();
  server.close();
  server.closeAllConnections();
});

function countingLimiter(): RateLimiter & { waits: number } {
  const l = { waits: 0, wait: () => { l.waits++; return Promise.resolve(); }, tryAccept: () => true };
  return l;
}

const connection = (): { server: string; insecureSkipTLSVerify: boolean } => ({ server: url, insecureSkipTLSVerify: false });

void describe('the REST client', () => {
  void it('sends each verb with its content type, JSON Accept and the query', async () => {
    const logger = new FakeLogger();
    const limiter = countingLimiter();
    const rest = createRestClient({ clock: realClock, connection: connection(), qps: 5, burst: 10, contentType: 'application/vnd.orch.protobuf', logger, limiter });
    assert.deepEqual(logger.at('warn'), [], 'the protobuf default is served by JSON without a warning');
    seen.length = 0;
    await rest.get('/o', { query: { labelSelector: 'a=b,c', limit: 5, watch: undefined, allow: false } });
    await rest.create('/o', { x: 1 });
    await rest.update('/o', { x: 2 });
    await rest.patch('/o', 'merge', { x: 3 });
    await rest.patch('/o', 'strategic', { x: 4 });
    await rest.patch('/o', 'json', [{ op: 'add', path: '/x', value: 5 }]);
    assert.deepEqual(await rest.delete('/o', { propagationPolicy: 'Background' }), { echo: { method: 'DELETE', body: { propagationPolicy: 'Background' } } });
    await rest.delete('/o');
    assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.contentType}`), [
      'GET /o?labelSelector=a%3Db%2Cc&limit=5&allow=false ',
      'POST /o application/json',
      'PUT /o application/json',
      'PATCH /o application/merge-patch+json',
      'PATCH /o application/strategic-merge-patch+json',
      'PATCH /o application/json-patch+json',
      'DELETE /o application/json',
      'DELETE /o ',
    ]);
    assert.ok(seen.every((s) => s.accept === 'application/json'));
    assert.equal(limiter.waits, 8);
    await rest.get('/o', { exempt: true });
    assert.equal(limiter.waits, 8, 'exempt calls bypass the limiter');
    assert.deepEqual(await rest.list('/list'), { kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [] });
    rest.close();
    const quiet = new FakeLogger();
    createRestClient({ clock: realClock, connection: connection(), qps: 0, burst: 0, contentType: 'application/json', logger: quiet }).close();
    assert.deepEqual(quiet.at('warn'), []);
    const odd = new FakeLogger();
    createRestClient({ clock: realClock, connection: connection(), qps: 0, burst: 0, contentType: 'text/plain', logger: odd }).close();
    assert.match(odd.at('warn')[0]?.msg ?? '', /contentType text\/plain is not supported by this client; using application\/json/);
    assert.equal(withQuery('/p?watch=true', { a: 1 }), '/p?watch=true&a=1');
  });

  void it('keeps the Status on errors, and retries only what is safe to retry', async () => {
    const rest = createRestClient({ clock: realClock, connection: connection(), qps: 100, burst: 100, contentType: 'application/json', retryDelayMs: 1 });
    const check = async (p: Promise<unknown>, category: string, reason: string, code: number): Promise<void> => {
      await assert.rejects(p, (err: unknown) => err instanceof OrchError && err.category === category && statusOf(err)?.reason === reason && statusOf(err)?.code === code);
    };
    await check(rest.create('/exists', {}), 'already-exists', 'AlreadyExists', 409);
    await check(rest.update('/conflict', {}), 'conflict', 'Conflict', 409);
    await check(rest.get('/missing'), 'not-found', 'NotFound', 404);
    assert.equal(statusOf(await rest.get('/missing').catch((e: unknown) => e))?.details?.name, 'x');
    flaky = 0;
    assert.deepEqual(await rest.get('/flaky'), { echo: { method: 'GET', body: null } });
    flaky = 0;
    await check(rest.create('/flaky', {}), 'unavailable', 'InternalError', 500);
    assert.equal(flaky, 1, 'a POST answered 500 is not sent again');
    flaky = 0;
    assert.deepEqual(await rest.create('/busy', { a: 1 }), { echo: { method: 'POST', body: { a: 1 } } });
    assert.equal(flaky, 2, 'a POST answered 429 is sent again');
    const down = createRestClient({ clock: realClock, connection: { server: 'http://127.0.0.1:1', insecureSkipTLSVerify: false }, qps: 100, burst: 100, retries: 0 });
    await assert.rejects(down.get('/x'), (err: unknown) => err instanceof OrchError && err.code === 'ORCHCLIENT_UNAVAILABLE' && statusOf(err) === undefined);
    assert.throws(() => createRestClient({ clock: realClock, connection: connection(), qps: -1, burst: 1 }), /qps -1/);
    rest.close();
    down.close();
  });

  void it('pauses between retries on its clock, doubling, and gives up with ORCHCLIENT_ABORTED when aborted meanwhile', async () => {
    const clock = new FakeClock();
    const rest = createRestClient({ clock, connection: connection(), qps: 100, burst: 100, contentType: 'application/json', retryDelayMs: 300, random: () => 0 });
    flaky = 0;
    let answer: unknown;
    const got = rest.get('/flaky').then((a) => { answer = a; });
    await waitFor('the first pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    assert.equal(flaky, 1);
    await clock.advance(299);
    assert.equal(flaky, 1, 'not sent again before the pause ended');
    await clock.advance(1);
    await waitFor('the second pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    assert.equal(flaky, 2);
    await clock.advance(600);
    await got;
    assert.deepEqual(answer, { echo: { method: 'GET', body: null } });
    assert.deepEqual(clock.delays, [300, 600]);

    flaky = 0;
    const stop = new AbortController();
    const aborted = rest.get('/flaky', { signal: stop.signal });
    await waitFor('a pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    stop.abort();
    await assert.rejects(aborted, (err: unknown) => err instanceof OrchError && err.code === 'ORCHCLIENT_ABORTED');
    assert.equal(flaky, 1, 'not sent again');
    rest.close();
  });

  void it('waits the Retry-After of a 429 before sending again, and jitters its own pauses', async () => {
    const clock = new FakeClock();
    const rest = createRestClient({ clock, connection: connection(), qps: 100, burst: 100, contentType: 'application/json', retryDelayMs: 300, random: () => 0.5 });
    busy = 0;
    const got = rest.create('/retry-after', { a: 1 });
    await waitFor('the pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    await clock.advance(2_999);
    assert.equal(busy, 1, 'not sent again before Retry-After passed');
    await clock.advance(1);
    assert.deepEqual(await got, { ok: true });
    assert.equal(busy, 2);
    assert.deepEqual(clock.delays, [3000]);

    flaky = 0;
    const again = rest.get('/flaky');
    await waitFor('a jittered pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    assert.equal(clock.delays.at(-1), 450, '300 ms and half as much again');
    await clock.advance(450);
    await waitFor('the second pause', () => clock.pending().length === 1, { timeoutMs: 5000, intervalMs: 5 });
    await clock.advance(900);
    await again;
    rest.close();
  });

  void it('watches: events across chunk boundaries in order, ERROR events passed on, the end reported', async () => {
    const rest = createRestClient({ clock: realClock, connection: connection(), qps: 100, burst: 100, contentType: 'application/json' });
    const events: WatchEvent[] = [];
    const w = rest.watch<Record<string, unknown>>('/pods', (e) => events.push(e), { query: { resourceVersion: '1', allowWatchBookmarks: true } });
    assert.deepEqual(await w.done, { reason: 'closed' });
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'ERROR']);
    assert.equal((events[1]?.object.data as { k: string }).k, 'ü');
    assert.equal(seen.at(-1)?.url, '/pods?resourceVersion=1&allowWatchBookmarks=true&watch=true');

    const gone = await rest.watch('/gone', () => undefined).done;
    assert.equal(gone.reason, 'error');
    assert.equal(isResourceExpired(gone.error), true);
    assert.equal(statusOf(gone.error)?.reason, 'Expired');

    const hanging: string[] = [];
    const h = rest.watch<{ metadata: { name: string } }>('/hang', (e) => hanging.push(e.object.metadata.name));
    while (hanging.length === 0) await new Promise((r) => setImmediate(r));
    h.stop();
    assert.deepEqual(await h.done, { reason: 'stopped' });
    releaseHang();

    const h2 = rest.watch('/hang', () => undefined);
    const thrown = rest.watch('/pods', () => { throw new Error('consumer broke'); });
    assert.match(String((await thrown.done).error), /consumer broke/);
    rest.close();
    assert.deepEqual(await h2.done, { reason: 'stopped' }, 'close() stops open watches');
    releaseHang();
  });
});

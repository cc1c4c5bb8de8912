import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, createApi } from './api.js';
import { sparkPath } from './chart.js';
import { formatAge } from './format.js';
import { History } from './history.js';
import { LineSplitter } from './lines.js';
import { parseLogLine, timeKey } from './log-tail.js';
import { parseRoute } from './route.js';
import { backoffMs } from './reflector.js';
import { visibleRows } from './window.js';

void describe('the console\'s small pieces', () => {
  void it('splits lines across chunks and multi-byte characters', () => {
    const s = new LineSplitter();
    const bytes = new TextEncoder().encode('a\nbé');
    assert.deepEqual(s.push(bytes.slice(0, 4)), ['a']);
    assert.deepEqual(s.push(bytes.slice(4)), []);
    assert.deepEqual(s.push(new TextEncoder().encode('c\n\nd')), ['béc', '']);
    assert.equal(s.end(), 'd');
  });

  void it('draws only the rows on screen, with overscan, clamped', () => {
    assert.deepEqual(visibleRows(0, 360, 36, 3000, 8), { start: 0, end: 18 });
    assert.deepEqual(visibleRows(36 * 1000 + 10, 360, 36, 3000, 8), { start: 992, end: 1019 });
    assert.deepEqual(visibleRows(36 * 2995, 360, 36, 3000, 8), { start: 2987, end: 3000 });
    assert.deepEqual(visibleRows(0, 0, 36, 0, 8), { start: 0, end: 0 });
  });

  void it('backs off 1 s doubling to its cap', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((a) => backoffMs(a)), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    assert.deepEqual([1, 4, 5].map((a) => backoffMs(a, 8000)), [1000, 8000, 8000]);
  });

  void it('prints ages as kubectl', () => {
    assert.deepEqual([5_000, 65_000, 600_000, 3_700_000, 90_000_000, 40 * 86_400_000].map(formatAge), ['5s', '1m5s', '10m', '1h1m', '1d1h', '40d']);
  });

  void it('parses routes, anything unknown being the overview', () => {
    assert.deepEqual(parseRoute('#/nodes/node-1'), { view: 'node', name: 'node-1' });
    assert.deepEqual(parseRoute('#/pods/kube%2Dsystem/web-0'), { view: 'pod', namespace: 'kube-system', name: 'web-0' });
    const pods = parseRoute('#/pods?ns=default&q=web');
    assert.equal(pods.view === 'pods' ? pods.query.get('q') : '', 'web');
    assert.deepEqual(parseRoute(''), { view: 'nodes' });
    assert.deepEqual(parseRoute('#/whatever'), { view: 'nodes' });
  });

  void it('splits timestamps off log lines and orders them with any fraction', () => {
    assert.deepEqual(parseLogLine('2024-05-01T10:00:00.123456789Z hello world'), { time: '2024-05-01T10:00:00.123456789Z', text: 'hello world' });
    assert.deepEqual(parseLogLine('no time here'), { time: '', text: 'no time here' });
    assert.ok(timeKey('2024-05-01T10:00:00.5Z') > timeKey('2024-05-01T10:00:00.123456789Z'));
    assert.ok(timeKey('2024-05-01T10:00:01Z') > timeKey('2024-05-01T10:00:00.999Z'));
  });

  void it('keeps samples of the window, one per time', () => {
    const h = new History(60_000);
    h.add('n', 1000, 1);
    h.add('n', 1000, 2);
    h.add('n', 30_000, 3);
    h.add('n', 65_000, 4);
    assert.deepEqual(h.get('n'), [{ t: 30_000, v: 3 }, { t: 65_000, v: 4 }]);
    h.retain((k) => k !== 'n');
    assert.deepEqual(h.get('n'), []);
    assert.equal(sparkPath([{ t: 60_000, v: 50 }, { t: 120_000, v: 100 }], { width: 100, height: 20, windowMs: 120_000, now: 120_000, max: 100 }), 'M50.0,10.0L100.0,1.0');
  });

  void it('sends the bearer token, turns Status answers into errors and reports the first 401 once', async () => {
    const seen: RequestInit[] = [];
    const unauthorized: ApiError[] = [];
    const api = createApi({
      token: 't0k',
      fetch: (_path, init) => {
        seen.push(init);
        return Promise.resolve(new Response(JSON.stringify({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' }), { status: 401 }));
      },
      onUnauthorized: (e) => unauthorized.push(e),
    });
    await assert.rejects(api.get('/api/v1/pods'), (e: unknown) => e instanceof ApiError && e.status === 401 && e.message === 'Unauthorized');
    await assert.rejects(api.get('/api/v1/nodes'));
    assert.equal(unauthorized.length, 1);
    assert.equal((seen[0]?.headers as Record<string, string>).Authorization, 'Bearer t0k');
    assert.equal(seen[0]?.credentials, 'omit');
    const down = createApi({ token: 't', fetch: () => Promise.reject(new TypeError('Failed to fetch')) });
    await assert.rejects(down.get('/api'), (e: unknown) => e instanceof ApiError && e.status === 0 && /cannot be reached/.test(e.message));
  });
});

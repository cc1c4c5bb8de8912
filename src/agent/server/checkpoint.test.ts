import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { checkpointRoutes } from './checkpoint.js';
import { HttpError } from './http.js';
import type { RequestContext } from './router.js';
import { servedPodRuntime } from './testing.js';

let dir: string;
before(async () => { dir = await mkdtemp(join(tmpdir(), 'checkpoint-')); });
after(async () => { await rm(dir, { recursive: true, force: true }); });

const pod: NodePod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [{ name: 'main', image: 'busybox' }, { name: 'side', image: 'busybox' }] } };

async function post(path: string, setup?: (cri: Awaited<ReturnType<typeof servedPodRuntime>>['cri']) => void): Promise<{ status: number; body: string; calls: unknown[] }> {
  const { cri } = await servedPodRuntime(dir);
  setup?.(cri);
  const clock = new FakeClock();
  clock.set(Date.parse('2026-12-06T17:40:05.123Z'));
  const [route] = checkpointRoutes({ pods: { desiredPods: () => [pod], podStatus: () => undefined }, cri, rootDir: dir, clock });
  assert.ok(route);
  const url = new URL(`http://x${path}`);
  const [, , namespace = '', name = '', container = ''] = url.pathname.split('/');
  let status = 0;
  let body = '';
  const res = { writeHead: (s: number) => { status = s; }, end: (b: Buffer) => { body = b.toString(); } } as unknown as ServerResponse;
  try {
    await route.handle({ res, url, params: { namespace, pod: name, container } } as unknown as RequestContext);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    status = err.status;
    body = err.message;
  }
  return { status, body, calls: cri.callsOf('checkpointContainer') };
}

void describe('POST /checkpoint/{namespace}/{pod}/{container}', () => {
  void it('answers 404 for an unknown pod or a container not in its spec, without calling the runtime', async () => {
    assert.deepEqual(await post('/checkpoint/default/nope/main'), { status: 404, body: 'pod does not exist', calls: [] });
    assert.deepEqual(await post('/checkpoint/other/web/main'), { status: 404, body: 'pod does not exist', calls: [] });
    assert.deepEqual(await post('/checkpoint/default/web/nope'), { status: 404, body: 'container nope does not exist', calls: [] });
  });

  void it('asks the runtime for a checkpoint under <rootDir>/checkpoints and lists its path', async () => {
    const r = await post('/checkpoint/default/web/main?timeout=30');
    const location = join(dir, 'checkpoints', 'checkpoint-web_default-main-2026-12-06T17:40:05Z.tar');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { items: [location] });
    assert.equal((r.calls[0] as { location: string; timeout: number }).location, location);
    assert.equal((r.calls[0] as { timeout: number }).timeout, 30);
    assert.ok((await stat(join(dir, 'checkpoints'))).isDirectory());
  });

  void it('answers 500 with the runtime\'s error, and for a container that is not running or a bad timeout', async () => {
    const unimplemented = await post('/checkpoint/default/web/main', (cri) => {
      cri.failNext('checkpointContainer', new Error('rpc error: code = Unimplemented desc = unknown method CheckpointContainer'));
    });
    assert.deepEqual([unimplemented.status, unimplemented.body], [500, 'checkpointing of default/web/main failed (rpc error: code = Unimplemented desc = unknown method CheckpointContainer)']);
    const notRunning = await post('/checkpoint/default/web/side');
    assert.deepEqual([notRunning.status, notRunning.body, notRunning.calls], [500, 'checkpointing of default/web/side failed (container side not found)', []]);
    const bad = await post('/checkpoint/default/web/main?timeout=soon');
    assert.deepEqual([bad.status, bad.body, bad.calls], [500, 'cannot parse value of timeout parameter', []]);
  });
});

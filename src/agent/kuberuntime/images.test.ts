import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { LogRoot } from '../logging/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { ImagePuller, type ImagePullerOptions } from './images.js';
import { pullBudget, PullSlots } from './pull-limits.js';
import type { NodePod } from '../../api/pod/index.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
const sandboxConfig = { metadata: { name: 'p', namespace: 'n', uid: 'u1', attempt: 0 } };

function setup(extra: Partial<ImagePullerOptions> = {}): { fake: FakeRuntime; puller: ImagePuller; clock: FakeClock } {
  const clock = new FakeClock(1_000_000);
  const fake = new FakeRuntime(() => clock.now());
  const puller = new ImagePuller({
    images: fake, logger, clock, serialize: true, maxParallel: 0, qps: 0, burst: 0, backOff: { initialMs: 10_000, maxMs: 300_000 }, ...extra,
  });
  return { fake, puller, clock };
}

function pod(uid = 'u1'): NodePod {
  return { metadata: { name: 'p', namespace: 'n', uid }, spec: { containers: [] } };
}

void describe('ImagePuller', () => {
  void it('IfNotPresent: uses a present image without pulling, pulls an absent one', async () => {
    const { fake, puller } = setup();
    fake.images.set('busybox:1.35', 'sha256:bb');
    assert.deepEqual(await puller.ensureImage(pod(), { name: 'c', image: 'busybox:1.35' }, sandboxConfig), { ok: true, imageRef: 'sha256:bb', uid: 0, username: '' });
    assert.equal(fake.callsOf('pullImage').length, 0);
    fake.registry.set('other:1', 'sha256:oo');
    assert.equal((await puller.ensureImage(pod(), { name: 'c', image: 'other:1' }, sandboxConfig)).ok, true);
    assert.deepEqual(fake.callsOf('pullImage'), [{ image: { image: 'other:1' }, sandboxConfig }]);
  });

  void it('Always pulls even when present; an untagged image defaults to Always and :latest', async () => {
    const { fake, puller } = setup();
    fake.images.set('busybox:1.35', 'sha256:bb');
    fake.registry.set('busybox:1.35', 'sha256:bb');
    fake.registry.set('busybox:latest', 'sha256:new');
    await puller.ensureImage(pod(), { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'Always' }, sandboxConfig);
    const r = await puller.ensureImage(pod(), { name: 'c', image: 'busybox' }, sandboxConfig);
    assert.deepEqual(r, { ok: true, imageRef: 'sha256:new', username: '' });
    assert.deepEqual(fake.callsOf('pullImage').map((c) => (c as { image: { image: string } }).image.image), ['busybox:1.35', 'busybox:latest']);
  });

  void it('pods asking about one image at once share the ImageStatus call; a later ask makes a new one', async () => {
    const { fake, puller } = setup();
    fake.images.set('busybox:1.35', 'sha256:bb');
    const results = await Promise.all(['u1', 'u2', 'u3'].map((uid) => puller.ensureImage(pod(uid), { name: 'c', image: 'busybox:1.35' }, sandboxConfig)));
    assert.deepEqual(results.map((r) => (r.ok ? r.imageRef : r.reason)), ['sha256:bb', 'sha256:bb', 'sha256:bb']);
    assert.equal(fake.callsOf('imageStatus').length, 1);
    fake.images.delete('busybox:1.35');
    fake.registry.set('busybox:1.35', 'sha256:b2');
    assert.deepEqual(await puller.ensureImage(pod('u4'), { name: 'c', image: 'busybox:1.35' }, sandboxConfig), { ok: true, imageRef: 'sha256:b2', username: '' });
    assert.equal(fake.callsOf('imageStatus').length, 2);
  });

  void it('tries each credential in turn until a pull works, anonymously when there is none; asks for the repository without tag', async () => {
    const { fake } = setup();
    fake.registry.set('r.example:5000/team/app:1', 'sha256:aa');
    const asked: string[] = [];
    const tried: (string | undefined)[] = [];
    const picky = new ImagePuller({
      images: {
        imageStatus: (r) => fake.imageStatus(r),
        pullImage: (r) => {
          tried.push(r.auth?.username);
          return r.auth?.username === 'good' ? fake.pullImage(r) : Promise.reject(new Error(`401 for ${r.auth?.username ?? 'anonymous'}`));
        },
      },
      logger, clock: new FakeClock(), serialize: true, maxParallel: 0, qps: 0, burst: 0, backOff: { initialMs: 10_000, maxMs: 300_000 },
    });
    const auth = (creds: { username: string }[]) => ({ auth: (repo: string) => { asked.push(repo); return Promise.resolve(creds); } });
    const ok = await picky.ensureImage(pod('u1'), { name: 'c', image: 'r.example:5000/team/app:1' }, sandboxConfig, auth([{ username: 'bad' }, { username: 'good' }]));
    assert.equal(ok.ok, true);
    assert.deepEqual(tried, ['bad', 'good']);
    assert.deepEqual(asked, ['r.example:5000/team/app']);
    const failed = await picky.ensureImage(pod('u2'), { name: 'c', image: 'r.example:5000/team/app:1', imagePullPolicy: 'Always' }, sandboxConfig, auth([{ username: 'x' }, { username: 'y' }]));
    assert.ok(!failed.ok);
    assert.match(failed.message, /\[401 for x, 401 for y\]/);
    await picky.ensureImage(pod('u3'), { name: 'c', image: 'busybox:1.35' }, sandboxConfig, auth([]));
    assert.deepEqual(tried.slice(4), [undefined], 'no credentials: one anonymous pull');
    assert.equal(asked[2], 'docker.io/library/busybox');
  });

  void it('Never: ErrImageNeverPull when absent', async () => {
    const { fake, puller } = setup();
    const r = await puller.ensureImage(pod(), { name: 'c', image: 'absent:1', imagePullPolicy: 'Never' }, sandboxConfig);
    assert.deepEqual(r, { ok: false, reason: 'ErrImageNeverPull', message: 'Container image "absent:1" is not present with pull policy of Never' });
    fake.images.set('absent:1', 'sha256:a');
    assert.equal((await puller.ensureImage(pod(), { name: 'c', image: 'absent:1', imagePullPolicy: 'Never' }, sandboxConfig)).ok, true);
  });

  void it('InvalidImageName without asking the runtime', async () => {
    const { fake, puller } = setup();
    const r = await puller.ensureImage(pod(), { name: 'c', image: 'Not/Valid:' }, sandboxConfig);
    assert.equal(r.ok ? '' : r.reason, 'InvalidImageName');
    assert.match(r.ok ? '' : r.message, /^Failed to apply default image tag "Not\/Valid:"/);
    assert.equal(fake.calls.length, 0);
  });

  void it('ErrImagePull, then ImagePullBackOff while the back-off holds (per pod and image), doubling', async () => {
    const { fake, puller, clock } = setup();
    const c: Container = { name: 'c', image: 'nope:1' };
    const first = await puller.ensureImage(pod(), c, sandboxConfig);
    assert.equal(first.ok ? '' : first.reason, 'ErrImagePull');
    assert.match(first.ok ? '' : first.message, /^Failed to pull image "nope:1": failed to resolve reference/);
    assert.equal(first.ok ? 0 : first.retryAfterMs, 10_000);
    clock.set(clock.now() + 4_000);
    const second = await puller.ensureImage(pod(), c, sandboxConfig);
    assert.deepEqual(second, { ok: false, reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"', retryAfterMs: 6_000 });
    assert.equal(fake.callsOf('pullImage').length, 1);
    const other = await puller.ensureImage(pod('u2'), c, sandboxConfig);
    assert.equal(other.ok ? '' : other.reason, 'ErrImagePull', 'another pod has its own back-off');
    clock.set(clock.now() + 6_000);
    const third = await puller.ensureImage(pod(), c, sandboxConfig);
    assert.equal(third.ok ? 0 : third.retryAfterMs, 20_000);
    puller.forgetPod('u1');
    const afterForget = await puller.ensureImage(pod(), c, sandboxConfig);
    assert.equal(afterForget.ok ? '' : afterForget.reason, 'ErrImagePull', 'forgotten: pulled again at once');
    assert.equal(fake.callsOf('pullImage').length, 4);
    fake.registry.set('nope:1', 'sha256:n');
    clock.set(clock.now() + 30_000);
    assert.equal((await puller.ensureImage(pod(), c, sandboxConfig)).ok, true);
  });

  void it('ImageInspectError when ImageStatus fails; rejects when the runtime is unreachable', async () => {
    const { fake, puller } = setup();
    fake.failNext('imageStatus', new OrchError('CRI_ERROR', 'internal', 'boom'));
    const r = await puller.ensureImage(pod(), { name: 'c', image: 'x:1' }, sandboxConfig);
    assert.equal(r.ok ? '' : r.reason, 'ImageInspectError');
    fake.failNext('imageStatus', new OrchError('CRI_UNAVAILABLE', 'unavailable', 'down'));
    await assert.rejects(puller.ensureImage(pod(), { name: 'c', image: 'x:1' }, sandboxConfig), { code: 'CRI_UNAVAILABLE' });
  });

  void it('QPS exceeded fails the pull as upstream', async () => {
    const { fake, puller } = setup({ qps: 1, burst: 1 });
    fake.registry.set('a:1', 'sha256:a');
    fake.registry.set('b:1', 'sha256:b');
    assert.equal((await puller.ensureImage(pod(), { name: 'c', image: 'a:1' }, sandboxConfig)).ok, true);
    const r = await puller.ensureImage(pod(), { name: 'c', image: 'b:1' }, sandboxConfig);
    assert.match(r.ok ? '' : r.message, /pull QPS exceeded/);
  });

  void it('the same image pulled for two pods at once is pulled once', async () => {
    const { fake, puller } = setup({ serialize: false });
    fake.registry.set('a:1', 'sha256:a');
    const results = await Promise.all([puller.ensureImage(pod('u1'), { name: 'c', image: 'a:1' }, sandboxConfig), puller.ensureImage(pod('u2'), { name: 'c', image: 'a:1' }, sandboxConfig)]);
    assert.ok(results.every((r) => r.ok));
    assert.equal(fake.callsOf('pullImage').length, 1);
  });
});

void describe('PullSlots', () => {
  void it('runs one at a time when serialized, in order', async () => {
    const slots = new PullSlots(1);
    const order: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const a = slots.run(async () => {
      order.push('a-start');
      await gate;
      order.push('a-end');
    });
    const b = slots.run(() => {
      order.push('b');
      return Promise.resolve();
    });
    await Promise.resolve();
    assert.deepEqual(slots.load(), { running: 1, waiting: 1 });
    release();
    await Promise.all([a, b]);
    assert.deepEqual(order, ['a-start', 'a-end', 'b']);
    assert.deepEqual(slots.load(), { running: 0, waiting: 0 });
  });

  void it('runs up to the limit at once, and passes the slot on a failure', async () => {
    const slots = new PullSlots(2);
    let peak = 0;
    let now = 0;
    const task = async (fail: boolean) => {
      now++;
      peak = Math.max(peak, now);
      await new Promise((r) => setImmediate(r));
      now--;
      if (fail) throw new Error('x');
    };
    const results = await Promise.allSettled([task, task, task, task, task].map((t, i) => slots.run(() => t(i === 1))));
    assert.equal(peak, 2);
    assert.equal(results.filter((r) => r.status === 'rejected').length, 1);
    assert.deepEqual(slots.load(), { running: 0, waiting: 0 });
    const unlimited = new PullSlots(0);
    peak = 0;
    await Promise.all([1, 2, 3, 4].map(() => unlimited.run(() => task(false))));
    assert.equal(peak, 4);
  });
});

void describe('the pull budget (registryPullQPS, registryBurst)', () => {
  void it('allows a burst, then qps per second; qps 0 never refuses; a burst of 0 is 1', () => {
    const clock = new FakeClock(0);
    const bucket = pullBudget(2, 3, clock);
    assert.deepEqual([1, 2, 3, 4].map(() => bucket.tryTake()), [true, true, true, false]);
    clock.set(500);
    assert.deepEqual([bucket.tryTake(), bucket.tryTake()], [true, false]);
    clock.set(10_500);
    assert.deepEqual([1, 2, 3, 4].map(() => bucket.tryTake()), [true, true, true, false], 'never more than the burst');
    const free = pullBudget(0, 0, clock);
    assert.ok(Array.from({ length: 100 }, () => free.tryTake()).every(Boolean));
    const one = pullBudget(1, 0, clock);
    assert.deepEqual([one.tryTake(), one.tryTake()], [true, false]);
  });
});

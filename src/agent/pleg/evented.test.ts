import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import type { ObservedObject, PodStatusObserver } from '../kuberuntime/index.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import type { TaskEvent, TaskEventHandlers, TaskEventSource } from '../runtime/events/index.js';
import { EVENT_GRACE_MS, EVENTED_RELIST_PERIOD_MS, LIVE_AGAIN_SETTLE_MS, createPleg, type Pleg } from './index.js';

/** A task event stream the test drives: live, failed, events. */
class FakeEvents implements TaskEventSource {
  handlers: TaskEventHandlers | undefined;
  subscriptions = 0;
  subscribe(handlers: TaskEventHandlers): { close(): void } {
    this.subscriptions++;
    this.handlers = handlers;
    return { close: () => { if (this.handlers === handlers) this.handlers = undefined; } };
  }
  live(): void { this.handlers?.onLive(); }
  fail(): void {
    const h = this.handlers;
    this.handlers = undefined;
    h?.onFailed(new OrchError('CRI_EVENTS_STREAM_FAILED', 'unavailable', "containerd's event stream failed: rpc error: code = Unavailable"));
  }
  emit(event: TaskEvent): void { this.handlers?.onEvent(event); }
}

class RecordingCache implements PodStatusObserver {
  readonly observed: { uid: string; objects: string[] }[] = [];
  readonly relists: { startedAt: number; seen: ReadonlySet<string> | undefined }[] = [];
  observe(uid: string, observed: readonly ObservedObject[]): () => boolean {
    this.observed.push({ uid, objects: observed.map((o) => `${o.id} ${o.state}`).sort() });
    return () => true;
  }
  relisted(startedAt: number, seen?: ReadonlySet<string>): void {
    this.relists.push({ startedAt, seen });
  }
}

interface Harness {
  clock: FakeClock;
  fake: FakeRuntime;
  events: FakeEvents;
  cache: RecordingCache;
  logger: FakeLogger;
  changed: string[];
  pleg: Pleg;
  /** Full relists so far (unfiltered sandbox lists). */
  fullRelists: () => number;
  /** Pod inspections so far (sandbox lists by UID). */
  inspections: () => number;
  pod: (uid: string) => Promise<{ sandbox: string; container: string }>;
}

function harness(): Harness {
  const clock = new FakeClock();
  const fake = new FakeRuntime();
  fake.images.set('img', 'sha256:img');
  const events = new FakeEvents();
  const cache = new RecordingCache();
  const logger = new FakeLogger();
  const changed: string[] = [];
  const pod = async (uid: string): Promise<{ sandbox: string; container: string }> => {
    const config: PodSandboxConfig = { metadata: { name: uid, uid, namespace: 'default', attempt: 0 }, labels: { [POD_UID_LABEL]: uid } };
    const sandbox = await fake.runPodSandbox({ config });
    const container = await fake.createContainer({ podSandboxId: sandbox, sandboxConfig: config, config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'img' }, labels: { [POD_UID_LABEL]: uid } } });
    await fake.startContainer(container);
    return { sandbox, container };
  };
  const pleg = createPleg({
    runtime: fake, logger, clock, cache,
    onPodChanged: (uid) => { changed.push(uid); },
    events: {
      source: events,
      listPod: async (uid) => {
        const labelSelector = { [POD_UID_LABEL]: uid };
        return [...await fake.listPodSandbox({ labelSelector }), ...await fake.listContainers({ labelSelector })];
      },
    },
  });
  const sandboxLists = (filtered: boolean): number => fake.calls.filter((c) => c.method === 'listPodSandbox' && (c.arg !== undefined) === filtered).length;
  return { clock, fake, events, cache, logger, changed, pleg, fullRelists: () => sandboxLists(false), inspections: () => sandboxLists(true), pod };
}

/** Started, the stream live and its first relist done. */
async function live(h: Harness): Promise<void> {
  h.pleg.start();
  await settle();
  h.events.live();
  await settle();
}

void describe('evented PLEG', () => {
  void it('reports a container exit from its event at once, inspecting only its pod, and relists every 300 s', async () => {
    const h = harness();
    const a = await h.pod('a');
    await h.pod('b');
    await live(h);
    assert.equal(h.fullRelists(), 2, 'one relist at start, one when the stream went live');
    h.changed.length = 0;
    h.fake.exit(a.container, 3);
    h.events.emit({ topic: 'exit', containerId: a.container });
    await settle();
    assert.deepEqual(h.changed, ['a'], 'the exited container\'s pod, without waiting for a relist');
    assert.equal(h.inspections(), 1);
    assert.equal(h.fullRelists(), 2, 'no full relist for an event about a known container');
    assert.deepEqual(h.cache.observed.at(-1), { uid: 'a', objects: [`${a.container} CONTAINER_EXITED`, `${a.sandbox} SANDBOX_READY`].sort() });
    await h.clock.advance(EVENTED_RELIST_PERIOD_MS - 1000);
    assert.equal(h.fullRelists(), 2, 'no relist before the safety net\'s period');
    await h.clock.advance(1000);
    assert.equal(h.fullRelists(), 3, 'the safety-net relist');
    await h.pleg.stop();
  });

  void it('looks again when the runtime does not show the change yet (its status follows the event)', async () => {
    const h = harness();
    const a = await h.pod('a');
    await live(h);
    h.changed.length = 0;
    h.events.emit({ topic: 'exit', containerId: a.container });
    await settle();
    assert.deepEqual(h.changed, [], 'still running in the runtime: nothing to report');
    await h.clock.advance(10);
    assert.deepEqual(h.changed, []);
    h.fake.exit(a.container, 0);
    await h.clock.advance(20);
    assert.deepEqual(h.changed, ['a'], 'seen on a later look');
    assert.ok(h.inspections() >= 3);
    await h.pleg.stop();
  });

  void it('finds an object it did not know with a full relist (a new pod\'s sandbox)', async () => {
    const h = harness();
    await live(h);
    const before = h.fullRelists();
    const b = await h.pod('b');
    h.events.emit({ topic: 'create', containerId: b.sandbox });
    await settle();
    assert.equal(h.fullRelists(), before + 1);
    assert.deepEqual(h.changed, ['b']);
    h.events.emit({ topic: 'delete', containerId: 'never-seen' });
    await settle();
    assert.equal(h.fullRelists(), before + 1, 'the deletion of an unknown object is nothing to look for');
    await h.pleg.stop();
  });

  void it('falls back to the 1 s relist while the stream fails, subscribes again with back-off, and relists once when it is back', async () => {
    const h = harness();
    const a = await h.pod('a');
    await live(h);
    h.events.fail();
    await settle();
    assert.equal(h.logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg).join(), 'The runtime\'s event stream failed; the PLEG relists every second until it is back');
    const down = h.fullRelists();
    assert.equal(h.events.subscriptions, 1);
    await h.clock.advance(500);
    assert.equal(h.events.subscriptions, 2, 'subscribed again after 0.5 s');
    h.events.fail();
    await h.clock.advance(999);
    assert.equal(h.events.subscriptions, 2, 'the next try after 1 s');
    await h.clock.advance(1);
    assert.equal(h.events.subscriptions, 3);
    await h.clock.advance(2000);
    assert.ok(h.fullRelists() - down >= 3, `relisting every second while down (${h.fullRelists() - down})`);
    // An exit while the stream is down, with no event for it: a relist catches it.
    h.changed.length = 0;
    h.fake.exit(a.container, 1);
    await h.clock.advance(1000);
    assert.deepEqual(h.changed, ['a'], 'the 1 s relist saw the exit');
    const b = await h.pod('b');
    h.changed.length = 0;
    const beforeLive = h.fullRelists();
    h.events.live();
    await settle();
    assert.equal(h.fullRelists(), beforeLive + 1, 'a relist once live again');
    assert.deepEqual(h.changed, ['b'], 'what happened while down, found by that relist');
    assert.match(h.logger.lines.filter((l) => l.level === 'info').map((l) => l.msg).join('\n'), /live again; relisting once/);
    // A runtime just back may still be recovering its containers: an exit it shows only now,
    // with its event gone before the subscription, is found by the relists of the settle window.
    h.changed.length = 0;
    h.fake.exit(b.container, 1);
    await h.clock.advance(1000);
    assert.deepEqual(h.changed, ['b'], 'seen by a relist within the settle window');
    await h.clock.advance(LIVE_AGAIN_SETTLE_MS);
    const settled = h.fullRelists();
    assert.ok(settled - beforeLive >= LIVE_AGAIN_SETTLE_MS / 1000, `relisting every second for ${LIVE_AGAIN_SETTLE_MS} ms (${settled - beforeLive})`);
    await h.clock.advance(60_000);
    assert.equal(h.fullRelists(), settled, 'back to the long period');
    await h.pleg.stop();
  });

  void it('vouches for the pod status cache while live and nothing is pending, as of the grace before, without the seen pods', async () => {
    const h = harness();
    const a = await h.pod('a');
    await live(h);
    await h.clock.advance(1000);
    const last = h.cache.relists.at(-1);
    assert.deepEqual(last, { startedAt: h.clock.now() - EVENT_GRACE_MS, seen: undefined });
    assert.equal(h.pleg.health().healthy, true);
    // An event whose change the runtime does not show yet: no vouching until it is seen.
    h.events.emit({ topic: 'exit', containerId: a.container });
    await settle();
    const count = h.cache.relists.length;
    await h.clock.advance(1000);
    assert.equal(h.cache.relists.length, count, 'not vouched while an event waits for the runtime');
    h.fake.exit(a.container, 0);
    await h.clock.advance(2000);
    assert.ok(h.cache.relists.length > count);
    await h.pleg.stop();
  });

  void it('gives up on an event the runtime never shows after about 5 s; the relist is the net', async () => {
    const h = harness();
    const a = await h.pod('a');
    await live(h);
    h.events.emit({ topic: 'exit', containerId: a.container });
    await h.clock.advance(10_000);
    const looks = h.inspections();
    assert.equal(looks, 10, 'the first look and nine more');
    await h.clock.advance(10_000);
    assert.equal(h.inspections(), looks);
    await h.pleg.stop();
  });
});

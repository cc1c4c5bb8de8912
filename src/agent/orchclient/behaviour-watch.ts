/**
 * The REST behaviour suite's watches (behaviour.ts): from a list's resourceVersion, from an
 * older one (the changes since replayed), without one (the current objects first), through
 * selectors (objects entering and leaving the selection), of one object, and from a compacted
 * resourceVersion (410 Expired, then the watch ends). Test code only.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { rvOf, withCase, type Obj, type RestFactory } from './behaviour-support.js';
import { errorFromWatchEvent, isResourceExpired } from './status.js';

export function describeWatchBehaviour(make: RestFactory): void {
  void it('watches from a list\'s resourceVersion: each later change once, in order, with its resourceVersion', () =>
    withCase(make, async (c) => {
      await c.rest.create(c.configmaps, c.configMap('before'));
      const listed = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector() } });
      const w = c.watch(c.configmaps, { labelSelector: c.selector(), resourceVersion: listed.metadata?.resourceVersion ?? '' });
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('w'));
      const patched = await c.rest.patch<Obj>(`${c.configmaps}/w`, 'merge', { data: { x: '1' } });
      await c.rest.delete(`${c.configmaps}/w`);
      assert.deepEqual(await w.waitForLines(3), ['ADDED w', 'MODIFIED w', 'DELETED w']);
      const [added, modified, deleted] = w.events.filter((e) => e.type !== 'BOOKMARK');
      assert.deepEqual([rvOf(added?.object), rvOf(modified?.object)], [rvOf(created), rvOf(patched)]);
      assert.deepEqual((deleted?.object)?.data, { x: '1' }, 'DELETED carries the last state');
      assert.ok(BigInt(rvOf(deleted?.object)) > BigInt(rvOf(patched)), 'DELETED carries the resourceVersion of the deletion');
    }));

  void it('replays the changes after an older resourceVersion, and sends the current objects first without one', () =>
    withCase(make, async (c) => {
      const first = await c.rest.create<Obj>(c.configmaps, c.configMap('one'));
      await c.rest.patch(`${c.configmaps}/one`, 'merge', { data: { x: '1' } });
      await c.rest.create(c.configmaps, c.configMap('two'));
      const replay = c.watch(c.configmaps, { labelSelector: c.selector(), resourceVersion: rvOf(first) });
      assert.deepEqual(await replay.waitForLines(2), ['MODIFIED one', 'ADDED two']);
      const fresh = c.watch(c.configmaps, { labelSelector: c.selector() });
      assert.deepEqual((await fresh.waitForLines(2)).sort(), ['ADDED one', 'ADDED two']);
      await c.rest.delete(`${c.configmaps}/two`);
      assert.deepEqual((await fresh.waitForLines(3))[2], 'DELETED two');
      assert.deepEqual((await replay.waitForLines(3))[2], 'DELETED two');
    }));

  void it('sends an object entering a selection as ADDED and one leaving it as DELETED', () =>
    withCase(make, async (c) => {
      await c.rest.create(c.configmaps, c.configMap('a', {}, { app: 'db' }));
      const listed = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector('app=web') } });
      const w = c.watch(c.configmaps, { labelSelector: c.selector('app=web'), resourceVersion: listed.metadata?.resourceVersion ?? '' });
      await c.rest.patch(`${c.configmaps}/a`, 'merge', { metadata: { labels: { app: 'web' } } });
      await c.rest.patch(`${c.configmaps}/a`, 'merge', { data: { k: 'v' } });
      await c.rest.patch(`${c.configmaps}/a`, 'merge', { metadata: { labels: { app: 'db' } } });
      await c.rest.patch(`${c.configmaps}/a`, 'merge', { data: { k: 'w' } });
      await c.rest.create(c.configmaps, c.configMap('b', {}, { app: 'web' }));
      assert.deepEqual(await w.waitForLines(4), ['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED b']);
      const node = c.unique('node');
      const pods = c.watch('/api/v1/pods', { fieldSelector: `spec.nodeName=${node}`, resourceVersion: listed.metadata?.resourceVersion ?? '' });
      await c.rest.create(c.pods, c.pod('elsewhere', c.unique('other')));
      await c.rest.create(c.pods, c.pod('mine', node));
      assert.deepEqual(await pods.waitForLines(1), ['ADDED mine'], 'a node\'s pods watched across namespaces, as the agent does');
    }));

  void it('watches one object by its name', () =>
    withCase(make, async (c) => {
      const listed = await c.rest.list<Obj>(c.configmaps, { query: { fieldSelector: 'metadata.name=one' } });
      const w = c.watch(c.configmaps, { fieldSelector: 'metadata.name=one', resourceVersion: listed.metadata?.resourceVersion ?? '' });
      await c.rest.create(c.configmaps, c.configMap('other'));
      await c.rest.create(c.configmaps, c.configMap('one'));
      await c.rest.delete(`${c.configmaps}/other`);
      await c.rest.delete(`${c.configmaps}/one`);
      assert.deepEqual(await w.waitForLines(2), ['ADDED one', 'DELETED one']);
    }));

  void it('answers a watch from a compacted resourceVersion with one ERROR event carrying 410 Expired, then ends it', () =>
    withCase(make, async (c) => {
      const created = await c.rest.create<Obj>(c.configmaps, c.configMap('one'));
      await c.rest.patch(`${c.configmaps}/one`, 'merge', { data: { x: '1' } });
      await c.harness.compact(rvOf(created));
      for (const query of [{ resourceVersion: rvOf(created) }, { resourceVersion: rvOf(created), labelSelector: c.selector() }]) {
        const w = c.watch(c.configmaps, query);
        const end = await w.handle.done;
        assert.equal(end.reason, 'closed', `the server ends the watch (${JSON.stringify(query)})`);
        assert.deepEqual(w.lines(), ['ERROR 410']);
        const [event] = w.events;
        assert.ok(event !== undefined);
        assert.equal((event.object).reason, 'Expired');
        assert.ok(isResourceExpired(errorFromWatchEvent(c.configmaps, event)), 'the reflector takes it for a re-list');
      }
      const listed = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector() } });
      const again = c.watch(c.configmaps, { labelSelector: c.selector(), resourceVersion: listed.metadata?.resourceVersion ?? '' });
      await c.rest.patch(`${c.configmaps}/one`, 'merge', { data: { x: '2' } });
      assert.deepEqual(await again.waitForLines(1), ['MODIFIED one'], 'a watch from a new list works');
    }, { compacting: true }));
}

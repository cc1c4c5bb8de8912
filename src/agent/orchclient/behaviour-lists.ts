/**
 * The REST behaviour suite's lists (behaviour.ts): a collection and all namespaces, label and
 * field selectors as the agent writes them, pages with continue tokens, and a continue token
 * whose revision is compacted. Test code only.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CASE_LABEL, nameOf, rejectsWith, rvOf, withCase, type Obj, type RestCase, type RestFactory } from './behaviour-support.js';

/** Creates configmaps a (app=web, tier=front), b (app=db), c (no app) in the case's namespace. */
async function threeConfigMaps(c: RestCase): Promise<void> {
  await c.rest.create(c.configmaps, c.configMap('a', {}, { app: 'web', tier: 'front' }));
  await c.rest.create(c.configmaps, c.configMap('b', {}, { app: 'db' }));
  await c.rest.create(c.configmaps, c.configMap('c'));
}

export function describeListBehaviour(make: RestFactory): void {
  void it('lists a namespace\'s collection and all namespaces, at a resourceVersion no older than the items', () =>
    withCase(make, async (c) => {
      await threeConfigMaps(c);
      const list = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector() } });
      assert.deepEqual(list.items.map(nameOf).sort(), ['a', 'b', 'c']);
      const listRv = BigInt(list.metadata?.resourceVersion ?? '0');
      for (const item of list.items) assert.ok(BigInt(rvOf(item)) <= listRv, `item ${nameOf(item)} at ${rvOf(item)}, list at ${listRv}`);
      assert.deepEqual(await c.names('/api/v1/configmaps', { labelSelector: c.selector() }), ['a', 'b', 'c'], 'across namespaces');
      assert.deepEqual(await c.names('/api/v1/configmaps', { labelSelector: c.selector(), fieldSelector: `metadata.namespace=${c.namespace}` }), ['a', 'b', 'c']);
      assert.deepEqual(await c.names('/api/v1/configmaps', { labelSelector: c.selector(), fieldSelector: 'metadata.namespace=elsewhere' }), []);
    }));

  void it('selects by label: equality, inequality, sets and existence', () =>
    withCase(make, async (c) => {
      await threeConfigMaps(c);
      const names = (selector: string): Promise<string[]> => c.names(c.configmaps, { labelSelector: c.selector(selector) });
      assert.deepEqual(await names('app=web'), ['a']);
      assert.deepEqual(await names('app==web'), ['a']);
      assert.deepEqual(await names('app!=web'), ['b', 'c'], 'inequality also selects objects without the label');
      assert.deepEqual(await names('app in (web,db)'), ['a', 'b']);
      assert.deepEqual(await names('app notin (web)'), ['b', 'c']);
      assert.deepEqual(await names('app'), ['a', 'b']);
      assert.deepEqual(await names('!app'), ['c']);
      assert.deepEqual(await names('app=web,tier=front'), ['a']);
      assert.deepEqual(await names('app=web,tier=back'), []);
      await rejectsWith(c.rest.list(c.configmaps, { query: { labelSelector: 'app in (web' } }), { code: 400, reason: 'BadRequest' }, 'a malformed label selector');
    }));

  void it('selects by field: the name, and a pod\'s spec.nodeName and status.phase; an unknown field is 400', () =>
    withCase(make, async (c) => {
      await threeConfigMaps(c);
      assert.deepEqual(await c.names(c.configmaps, { fieldSelector: 'metadata.name=b' }), ['b']);
      assert.deepEqual(await c.names(c.configmaps, { labelSelector: c.selector(), fieldSelector: 'metadata.name!=b' }), ['a', 'c']);
      const node = c.unique('node');
      await c.rest.create(c.pods, c.pod('on-node', node));
      await c.rest.create(c.pods, c.pod('elsewhere', c.unique('other')));
      await c.rest.create(c.pods, c.pod('pending'));
      const pods = (fieldSelector: string): Promise<string[]> => c.names('/api/v1/pods', { labelSelector: c.selector(), fieldSelector });
      assert.deepEqual(await pods(`spec.nodeName=${node}`), ['on-node']);
      assert.deepEqual(await pods('spec.nodeName='), ['pending'], 'an empty value selects pods bound to no node');
      assert.deepEqual(await pods(`spec.nodeName=${node},status.phase=Pending`), ['on-node']);
      assert.deepEqual(await pods('status.phase=Running'), []);
      await rejectsWith(c.rest.list(c.configmaps, { query: { fieldSelector: 'data.a=1' } }), { code: 400, reason: 'BadRequest' }, 'a field the resource has no selector for');
    }));

  void it('pages a list with limit and continue, every page at the first page\'s resourceVersion', () =>
    withCase(make, async (c) => {
      for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) await c.rest.create(c.configmaps, c.configMap(name));
      const seen: string[] = [];
      const versions = new Set<string>();
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector(), limit: 2, ...(token === undefined ? {} : { continue: token }) } });
        assert.ok(page.items.length <= 2, `page ${pages} holds ${page.items.length} items`);
        seen.push(...page.items.map(nameOf));
        versions.add(page.metadata?.resourceVersion ?? '');
        token = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
        if (pages === 0) await c.rest.create(c.configmaps, c.configMap('p6'));
        pages += 1;
      } while (token !== undefined && pages < 10);
      assert.deepEqual(seen, ['p1', 'p2', 'p3', 'p4', 'p5'], 'every item once, in name order; one created meanwhile is not in this list');
      assert.equal(versions.size, 1, 'every page at one resourceVersion');
      assert.ok(pages >= 3);
      assert.deepEqual(await c.names(c.configmaps, { labelSelector: `${CASE_LABEL}=${c.id}` }), ['p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    }));

  void it('refuses a continue token whose resourceVersion was compacted with 410 Expired', () =>
    withCase(make, async (c) => {
      for (const name of ['p1', 'p2', 'p3']) await c.rest.create(c.configmaps, c.configMap(name));
      const first = await c.rest.list<Obj>(c.configmaps, { query: { labelSelector: c.selector(), limit: 1 } });
      const token = first.metadata?.continue ?? '';
      assert.notEqual(token, '', 'a first page of one item has a continue token');
      await c.rest.patch(`${c.configmaps}/p1`, 'merge', { data: { after: 'the list' } });
      await c.harness.compact(first.metadata?.resourceVersion ?? '');
      await rejectsWith(c.rest.list(c.configmaps, { query: { labelSelector: c.selector(), limit: 1, continue: token } }), { code: 410, reason: 'Expired' }, 'the next page');
    }, { compacting: true }));
}

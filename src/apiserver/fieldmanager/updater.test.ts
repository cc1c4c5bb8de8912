import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setToFields } from './fieldsv1.js';
import { fieldElement as f, pathText } from './path.js';
import { testSchema } from './testing.js';
import { Conflicts, excluding, Updater, type ManagerSets } from './updater.js';

const updater = new Updater({ schema: testSchema, apiVersion: 'v1' });
const cm = (data: Record<string, string>, labels?: Record<string, string>): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', ...(labels === undefined ? {} : { labels }) }, data });
const owned = (managers: ManagerSets, key: string): unknown => {
  const vs = managers.get(key);
  return vs === undefined ? undefined : setToFields(vs.set);
};

/** Applies `config` as `manager`; answers the object after it (unchanged: the live one). */
function apply(live: unknown, config: unknown, managers: ManagerSets, manager: string, force = false): unknown {
  return updater.apply(live, config, managers, manager, force) ?? live;
}

void describe('ownership of applies', () => {
  void it('gives each applier the fields it applied; the same value applied twice is co-owned', () => {
    const managers: ManagerSets = new Map();
    let live = apply(cm({}), cm({ a: '1' }), managers, 'one');
    live = apply(live, cm({ a: '1', b: '2' }), managers, 'two');
    assert.deepEqual(live, cm({ a: '1', b: '2' }));
    assert.deepEqual((owned(managers, 'one') as Record<string, unknown>)['f:data'], { 'f:a': {} });
    assert.deepEqual((owned(managers, 'two') as Record<string, unknown>)['f:data'], { 'f:a': {}, 'f:b': {} });
  });
  void it('refuses to change a field another manager owns, naming each field; force takes it', () => {
    const managers: ManagerSets = new Map();
    const live = apply(cm({}), cm({ a: '1', b: '1' }), managers, 'one');
    let conflicts: Conflicts | undefined;
    try {
      apply(live, cm({ a: '2', b: '2', c: '3' }), managers, 'two');
    } catch (err) {
      if (err instanceof Conflicts) conflicts = err;
      else throw err;
    }
    assert.ok(conflicts !== undefined, 'a conflict is reported');
    assert.deepEqual(conflicts.list().map((c) => `${c.manager} ${pathText(c.path)}`), ['one .data.a', 'one .data.b']);
    assert.equal(managers.has('two'), false, 'nothing is recorded for a refused apply');
    const forced = apply(live, cm({ a: '2' }), managers, 'two', true);
    assert.deepEqual(forced, cm({ a: '2', b: '1' }));
    assert.deepEqual((owned(managers, 'one') as Record<string, unknown>)['f:data'], { 'f:b': {} });
  });
  void it('removes a field the applier no longer applies, unless another manager owns it', () => {
    const managers: ManagerSets = new Map();
    let live = apply(cm({}), cm({ a: '1', b: '1', c: '1' }), managers, 'one');
    live = apply(live, cm({ c: '1' }), managers, 'two');
    live = apply(live, { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } }, managers, 'one');
    assert.deepEqual(live, cm({ c: '1' }), 'a and b go; c stays, two owns it');
    assert.equal('f:data' in (owned(managers, 'one') as object), false);
  });
  void it('keeps the dropped fields an updater took over', () => {
    const managers: ManagerSets = new Map();
    let live = apply(cm({}), cm({ a: '1', b: '1' }), managers, 'applier');
    const edited = cm({ a: '1', b: 'edited' });
    updater.update(updater.compare(live, edited), managers, 'editor');
    live = edited;
    live = apply(live, cm({}), managers, 'applier');
    assert.deepEqual(live, cm({ b: 'edited' }));
  });
  void it('removes dropped list items and map entries, and the labels map once empty', () => {
    const managers: ManagerSets = new Map();
    const pod = (containers: unknown[], labels?: Record<string, string>): Record<string, unknown> => ({ metadata: { name: 'p', ...(labels === undefined ? {} : { labels }) }, spec: { containers } });
    let live = apply({ metadata: { name: 'p' } }, pod([{ name: 'a', image: '1' }, { name: 'b', image: '1', args: ['x'] }], { l: '1' }), managers, 'one');
    live = apply(live, pod([{ name: 'a', image: '1' }]), managers, 'one');
    assert.deepEqual(live, pod([{ name: 'a', image: '1' }]));
  });
  void it('an update takes changed fields from appliers; applying them back then conflicts', () => {
    const managers: ManagerSets = new Map();
    const live = apply(cm({}), cm({ a: '1' }), managers, 'applier');
    const next = cm({ a: 'changed' });
    updater.update(updater.compare(live, next), managers, 'editor');
    assert.equal('f:data' in (owned(managers, 'applier') as object), false, 'data.a is the editor\'s now');
    assert.deepEqual(owned(managers, 'editor'), { 'f:data': { 'f:a': {} } });
    assert.throws(() => apply(next, cm({ a: '1' }), managers, 'applier'), Conflicts);
  });
  void it('a removed field leaves every owner', () => {
    const managers: ManagerSets = new Map();
    const live = apply(cm({}), cm({ a: '1', b: '2' }), managers, 'one');
    updater.update(updater.compare(live, cm({ b: '2' })), managers, 'editor');
    assert.deepEqual(owned(managers, 'one'), { 'f:apiVersion': {}, 'f:data': { 'f:b': {} }, 'f:kind': {}, 'f:metadata': { 'f:name': {} } });
    assert.equal(managers.has('editor'), false, 'removing a field owns nothing');
  });
  void it('never owns what the write may not change (status of the object itself)', () => {
    const managers: ManagerSets = new Map();
    const filter = excluding([[f('status')]]);
    const config = { metadata: { name: 'p' }, spec: { replicas: 1 }, status: { phase: 'Running' } };
    updater.apply({ metadata: { name: 'p' } }, config, managers, 'one', false, filter);
    const fields = owned(managers, 'one') as Record<string, unknown>;
    assert.equal('f:status' in fields, false);
    assert.deepEqual(fields['f:spec'], { 'f:replicas': {} });
  });
});

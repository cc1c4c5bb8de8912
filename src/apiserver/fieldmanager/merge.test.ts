import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { merge, MergeError, removeItems } from './merge.js';
import { FieldSet } from './set.js';
import { fieldElement, keyElement, valueElement } from './path.js';
import { applyProblems } from './typed.js';
import { testSchema } from './testing.js';

const pod = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ metadata: { name: 'p' }, spec, ...extra });
const specOf = (o: unknown): Record<string, unknown> => (o as { spec: Record<string, unknown> }).spec;

void describe('merge by list type', () => {
  void it('map lists merge items by key, keep the unnamed live ones, and merge fields inside items', () => {
    const live = pod({ containers: [{ name: 'a', image: 'a:1', args: ['x'] }, { name: 'b', image: 'b:1' }] });
    const out = merge(testSchema, live, pod({ containers: [{ name: 'a', image: 'a:2' }] }));
    assert.deepEqual(specOf(out).containers, [{ name: 'a', image: 'a:2', args: ['x'] }, { name: 'b', image: 'b:1' }]);
  });
  void it('orders shared items as the configuration does, keeping live-only items where upstream does', () => {
    const live = pod({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = merge(testSchema, live, pod({ containers: [{ name: 'c' }, { name: 'n' }, { name: 'a' }] }));
    // structured-merge-diff: `a` waits for its turn after `c`; `b`, not applied, is passed on the way.
    assert.deepEqual((specOf(out).containers as { name: string }[]).map((c) => c.name), ['b', 'c', 'n', 'a']);
    const appended = merge(testSchema, live, pod({ containers: [{ name: 'b' }, { name: 'z' }] }));
    assert.deepEqual((specOf(appended).containers as { name: string }[]).map((c) => c.name), ['a', 'b', 'c', 'z']);
  });
  void it('keys items by every key field, a missing key taking its default (ports: protocol TCP)', () => {
    const live = pod({ containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 80, protocol: 'UDP' }] }] });
    const out = merge(testSchema, live, pod({ containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'web' }] }] }));
    assert.deepEqual((specOf(out).containers as { ports: unknown }[])[0]?.ports, [{ containerPort: 80, protocol: 'TCP', name: 'web' }, { containerPort: 80, protocol: 'UDP' }]);
  });
  void it('sets are unions in upstream order', () => {
    const out = merge(testSchema, { metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['c', 'a'] } });
    assert.deepEqual((out as { metadata: { finalizers: string[] } }).metadata.finalizers, ['c', 'a', 'b']);
  });
  void it('atomic lists, maps and structs are replaced whole; granular maps merge by key', () => {
    const live = pod({ tolerations: [{ key: 'a' }, { key: 'b' }], nodeSelector: { a: '1', b: '2' }, containers: [{ name: 'c', args: ['1', '2'], env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] }] }, { metadata: { name: 'p', labels: { a: '1', b: '2' } } });
    const out = merge(testSchema, live, pod({ tolerations: [{ key: 'c' }], nodeSelector: { c: '3' }, containers: [{ name: 'c', args: ['3'], env: [{ name: 'E', valueFrom: { configMapKeyRef: { key: 'other' } } }] }] }, { metadata: { name: 'p', labels: { c: '3' } } }));
    const spec = specOf(out);
    assert.deepEqual(spec.tolerations, [{ key: 'c' }]);
    assert.deepEqual(spec.nodeSelector, { c: '3' });
    assert.deepEqual(spec.containers, [{ name: 'c', args: ['3'], env: [{ name: 'E', valueFrom: { configMapKeyRef: { key: 'other' } } }] }]);
    assert.deepEqual((out as { metadata: { labels: unknown } }).metadata.labels, { a: '1', b: '2', c: '3' });
  });
  void it('fields without a detailed schema merge as maps, their lists whole', () => {
    const live = pod({ containers: [{ name: 'c', securityContext: { runAsUser: 1, capabilities: { add: ['A'], drop: ['B'] } } }] });
    const out = merge(testSchema, live, pod({ containers: [{ name: 'c', securityContext: { capabilities: { add: ['C'] } } }] }));
    assert.deepEqual((specOf(out).containers as { securityContext: unknown }[])[0]?.securityContext, { runAsUser: 1, capabilities: { add: ['C'], drop: ['B'] } });
  });
  void it('leaves its inputs untouched', () => {
    const live = pod({ containers: [{ name: 'a', image: 'a:1' }] });
    const before = structuredClone(live);
    merge(testSchema, live, pod({ containers: [{ name: 'a', image: 'a:2' }] }));
    assert.deepEqual(live, before);
  });
  void it('refuses a configuration naming an item twice', () => {
    assert.throws(() => merge(testSchema, pod({}), pod({ containers: [{ name: 'a' }, { name: 'a' }] })), MergeError);
  });
});

void describe('configuration checks', () => {
  void it('reports duplicate and unnamed items with their paths, as upstream', () => {
    const problems = applyProblems(testSchema, pod({ containers: [{ name: 'a', ports: [{ containerPort: 1 }, { containerPort: 1, protocol: 'TCP' }] }, { name: 'a' }, { image: 'x' }] }, { metadata: { finalizers: ['f', 'f'] } }));
    assert.deepEqual(problems, [
      '.metadata.finalizers: duplicate entries for key [="f"]',
      '.spec.containers[name="a"].ports: duplicate entries for key [containerPort=1,protocol="TCP"]',
      '.spec.containers: duplicate entries for key [name="a"]',
      '.spec.containers: element 2: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)',
    ]);
  });
});

void describe('removeItems', () => {
  void it('removes members with what is under them and drops what becomes empty', () => {
    const value = pod({ containers: [{ name: 'a', image: 'x', args: ['1'] }, { name: 'b' }] }, { metadata: { name: 'p', finalizers: ['f', 'g'], labels: { l: '1' } } });
    const remove = new FieldSet();
    remove.insert([fieldElement('spec'), fieldElement('containers'), keyElement([['name', 'b']])]);
    remove.insert([fieldElement('spec'), fieldElement('containers'), keyElement([['name', 'a']]), fieldElement('args')]);
    remove.insert([fieldElement('metadata'), fieldElement('finalizers'), valueElement('f')]);
    remove.insert([fieldElement('metadata'), fieldElement('labels'), fieldElement('l')]);
    assert.deepEqual(removeItems(testSchema, value, remove), pod({ containers: [{ name: 'a', image: 'x' }] }, { metadata: { name: 'p', finalizers: ['g'] } }));
  });
});

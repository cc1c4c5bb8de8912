import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compare } from './compare.js';
import { FieldsError, fieldsToSet, readFields, setToFields } from './fieldsv1.js';
import { fieldElement as f, keyElement, parseElement, pathText, valueElement } from './path.js';
import { FieldSet } from './set.js';
import { toFieldSet } from './typed.js';
import { testSchema } from './testing.js';
import { array, object, str } from '../schema/index.js';

void describe('field sets of objects, in FieldsV1', () => {
  void it('owns leaves, map entries and list items; structs only through their fields', () => {
    const config = {
      apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }], securityContext: { runAsUser: 1 } }], tolerations: [{ key: 't' }] },
      data: { a: 'b' },
    };
    assert.deepEqual(setToFields(toFieldSet(testSchema, config)), {
      'f:apiVersion': {},
      'f:data': { 'f:a': {} },
      'f:kind': {},
      'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {} },
      'f:spec': {
        'f:containers': {
          'k:{"name":"c"}': {
            '.': {}, 'f:image': {}, 'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
            'f:securityContext': { 'f:runAsUser': {} },
          },
        },
        'f:tolerations': {},
      },
    });
  });
  void it('owns the maps and items a write adds besides their fields ("." entries of Update managers)', () => {
    const before = { metadata: { name: 'x' }, data: { a: '1' } };
    const after = { metadata: { name: 'x', labels: { run: 'x' } }, data: { a: '2' }, spec: { containers: [{ name: 'c', image: 'i', resources: {} }] } };
    const c = compare(testSchema, before, after);
    assert.deepEqual(setToFields(c.added), {
      'f:metadata': { 'f:labels': { '.': {}, 'f:run': {} } },
      'f:spec': { '.': {}, 'f:containers': { '.': {}, 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:resources': {} } } },
    });
    assert.deepEqual(setToFields(c.modified), { 'f:data': { 'f:a': {} } });
    assert.ok(c.removed.empty());
    const back = compare(testSchema, after, before);
    assert.ok(back.removed.equals(c.added));
  });
  void it('writes keys in structured-merge-diff order and reads them back to the same set', () => {
    const set = new FieldSet();
    for (const port of [8080, 9, 80]) set.insert([f('ports'), keyElement([['protocol', 'TCP'], ['containerPort', port]])]);
    set.insert([f('finalizers'), valueElement('b')]);
    set.insert([f('finalizers'), valueElement('a')]);
    set.insert([f('a'), f('b')]);
    const fields = setToFields(set);
    assert.deepEqual(Object.keys(fields['f:ports'] as object), [
      'k:{"containerPort":9,"protocol":"TCP"}', 'k:{"containerPort":80,"protocol":"TCP"}', 'k:{"containerPort":8080,"protocol":"TCP"}',
    ]);
    assert.deepEqual(Object.keys(fields), ['f:a', 'f:finalizers', 'f:ports']);
    const text = JSON.stringify(fields);
    assert.equal(JSON.stringify(setToFields(fieldsToSet(JSON.parse(text)))), text);
    // Keys written by others in another order name the same items.
    assert.ok(fieldsToSet({ 'f:ports': { 'k:{"protocol":"TCP","containerPort":80}': {} } }).has([f('ports'), keyElement([['containerPort', 80], ['protocol', 'TCP']])]));
  });
  void it('escapes values as Go does and prints paths as upstream does', () => {
    assert.equal(valueElement('<a&b>').id, 'v:"\\u003ca\\u0026b\\u003e"');
    assert.equal(pathText([f('spec'), f('containers'), keyElement([['name', 'c']]), f('ports'), keyElement([['containerPort', 80], ['protocol', 'TCP']])]), '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]');
    assert.equal(pathText([f('metadata'), f('finalizers'), valueElement('x')]), '.metadata.finalizers[="x"]');
    assert.equal(parseElement('x:1'), undefined);
  });
  void it('refuses what is not FieldsV1 and drops element kinds it does not know', () => {
    assert.throws(() => fieldsToSet([]), FieldsError);
    assert.throws(() => fieldsToSet({ 'f:a': 1 }), FieldsError);
    assert.throws(() => fieldsToSet({ nocolon: {} }), FieldsError);
    assert.throws(() => fieldsToSet({ 'k:[1]': {} }), FieldsError);
    assert.deepEqual(setToFields(fieldsToSet({ 'z:future': {}, 'f:a': { '.': {}, 'f:b': {} } })), { 'f:a': { '.': {}, 'f:b': {} } });
  });
});

void describe('set operations', () => {
  const s = (...paths: string[][]): FieldSet => FieldSet.of(...paths.map((p) => p.map((n) => f(n))));
  void it('union, intersection and difference work on members and children', () => {
    const a = s(['a', 'b'], ['a', 'c'], ['d']);
    const b = s(['a', 'c'], ['e']);
    assert.ok(a.union(b).equals(s(['a', 'b'], ['a', 'c'], ['d'], ['e'])));
    assert.ok(a.intersection(b).equals(s(['a', 'c'])));
    assert.ok(a.difference(b).equals(s(['a', 'b'], ['d'])));
    // A member does not take the paths under it in a difference; it does in a recursive one.
    assert.ok(s(['a', 'b']).difference(s(['a'])).equals(s(['a', 'b'])));
    assert.ok(s(['a', 'b'], ['c']).recursiveDifference(s(['a'])).equals(s(['c'])));
    assert.ok(s(['status', 'phase'], ['spec', 'x']).restrictTo(s(['status'])).equals(s(['status', 'phase'])));
    assert.equal(a.size(), 3);
    assert.deepEqual(a.paths().map(pathText), ['.d', '.a.b', '.a.c']);
  });
  void it('collapses into one member what the schema made atomic since it was written', () => {
    const schema = object({ spec: object({ list: array(str()), ref: object({ name: str() }, { mapType: 'atomic' }), keep: object({ x: str() }) }) });
    const written = s(['spec', 'ref', 'name'], ['spec', 'keep', 'x']);
    written.insert([f('spec'), f('list'), valueElement('a')]);
    const read = readFields(setToFields(written), schema);
    assert.ok(read.set.equals(s(['spec', 'list'], ['spec', 'ref'], ['spec', 'keep', 'x'])));
    assert.equal(read.reconciled, true);
    assert.equal(readFields(setToFields(s(['spec', 'keep', 'x'])), schema).reconciled, false);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { array, object, objectMeta, str, type Schema } from '../schema/index.js';
import { PatchApplyError, PatchFormatError, applyPatch } from './index.js';

const container = object({ name: str(), image: str(), env: array(object({ name: str(), value: str() }), { mergeKey: 'name', patchStrategy: 'merge' }) });
const schema: Schema = object({
  metadata: objectMeta,
  note: str(),
  spec: object({ containers: array(container, { mergeKey: 'name', patchStrategy: 'merge' }), args: array(str()) }),
});

const base = {
  metadata: { name: 'x', labels: { a: '1', b: '2' }, finalizers: ['f1'] },
  note: 'hello',
  spec: {
    containers: [
      { name: 'a', image: 'busybox:1', env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'pause' },
    ],
    args: ['1', '2'],
  },
};

void describe('merge patch (RFC 7386)', () => {
  void it('merges objects, deletes with null and replaces lists', () => {
    const out = applyPatch('merge', base, { metadata: { labels: { a: null, c: '3' } }, spec: { args: ['9'] } }, schema);
    assert.deepEqual(out.metadata, { name: 'x', labels: { b: '2', c: '3' }, finalizers: ['f1'] });
    assert.deepEqual((out.spec as { args: string[] }).args, ['9']);
    assert.equal(base.metadata.labels.a, '1', 'the original is untouched');
  });
  void it('rejects a non-object patch', () => {
    assert.throws(() => applyPatch('merge', base, [1], schema), PatchFormatError);
  });
});

void describe('JSON patch (RFC 6902)', () => {
  void it('applies add, remove, replace, move, copy and test', () => {
    const out = applyPatch('json', base, [
      { op: 'test', path: '/note', value: 'hello' },
      { op: 'replace', path: '/note', value: 'bye' },
      { op: 'add', path: '/metadata/labels/c~1d', value: '4' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'add', path: '/spec/args/-', value: '3' },
      { op: 'add', path: '/spec/args/0', value: '0' },
      { op: 'copy', from: '/note', path: '/metadata/annotations' },
      { op: 'move', from: '/metadata/annotations', path: '/metadata/generateName' },
    ], schema);
    assert.equal(out.note, 'bye');
    assert.deepEqual((out.metadata as Record<string, unknown>).labels, { b: '2', 'c/d': '4' });
    assert.deepEqual((out.spec as { args: string[] }).args, ['0', '1', '2', '3']);
    assert.equal((out.metadata as Record<string, unknown>).generateName, 'bye');
  });
  void it('fails a test op and a missing path with PatchApplyError', () => {
    assert.throws(() => applyPatch('json', base, [{ op: 'test', path: '/note', value: 'other' }], schema), PatchApplyError);
    assert.throws(() => applyPatch('json', base, [{ op: 'remove', path: '/nope' }], schema), PatchApplyError);
    assert.throws(() => applyPatch('json', base, [{ op: 'replace', path: '/spec/args/5', value: 1 }], schema), PatchApplyError);
  });
  void it('rejects malformed documents with PatchFormatError', () => {
    assert.throws(() => applyPatch('json', base, { op: 'add' }, schema), PatchFormatError);
    assert.throws(() => applyPatch('json', base, [{ op: 'frob', path: '/a' }], schema), PatchFormatError);
    assert.throws(() => applyPatch('json', base, [{ op: 'add', path: '/a' }], schema), PatchFormatError);
    assert.throws(() => applyPatch('json', base, [{ op: 'add', path: 'a', value: 1 }], schema), PatchFormatError);
  });
});

void describe('strategic merge patch', () => {
  void it('merges keyed lists by name and appends new elements', () => {
    const out = applyPatch('strategic', base, { spec: { containers: [{ name: 'b', image: 'pause:2' }, { name: 'c', image: 'new' }] } }, schema);
    const containers = (out.spec as { containers: { name: string; image: string }[] }).containers;
    assert.deepEqual(containers.map((c) => `${c.name}=${c.image}`), ['a=busybox:1', 'b=pause:2', 'c=new']);
  });
  void it('merges nested keyed lists and deletes elements with $patch: delete', () => {
    const out = applyPatch('strategic', base, {
      spec: { containers: [{ name: 'a', env: [{ name: 'Y', value: '2' }] }, { name: 'b', $patch: 'delete' }] },
    }, schema);
    assert.deepEqual(out.spec, {
      containers: [{ name: 'a', image: 'busybox:1', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] }],
      args: ['1', '2'],
    });
  });
  void it('replaces unkeyed lists, unions set-like lists, deletes from them', () => {
    const out = applyPatch('strategic', base, { metadata: { finalizers: ['f2'] }, spec: { args: ['x'] } }, schema);
    assert.deepEqual((out.metadata as { finalizers: string[] }).finalizers, ['f1', 'f2']);
    assert.deepEqual((out.spec as { args: string[] }).args, ['x']);
    const removed = applyPatch('strategic', out, { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } }, schema);
    assert.deepEqual((removed.metadata as { finalizers: string[] }).finalizers, ['f2']);
  });
  void it('honours $patch: replace on objects and lists, $retainKeys and $setElementOrder', () => {
    const replaced = applyPatch('strategic', base, { metadata: { labels: { $patch: 'replace', z: '1' } } }, schema);
    assert.deepEqual((replaced.metadata as { labels: unknown }).labels, { z: '1' });
    const list = applyPatch('strategic', base, { spec: { containers: [{ $patch: 'replace' }, { name: 'only' }] } }, schema);
    assert.deepEqual((list.spec as { containers: unknown }).containers, [{ name: 'only' }]);
    const retained = applyPatch('strategic', base, { metadata: { $retainKeys: ['name'], name: 'x' } }, schema);
    assert.deepEqual(retained.metadata, { name: 'x' });
    const ordered = applyPatch('strategic', base, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } }, schema);
    assert.deepEqual((ordered.spec as { containers: { name: string }[] }).containers.map((c) => c.name), ['b', 'a']);
  });
  void it('rejects unknown directives', () => {
    assert.throws(() => applyPatch('strategic', base, { $patch: 'frob' }, schema), PatchFormatError);
    assert.throws(() => applyPatch('strategic', base, { $frob: 1 }, schema), PatchFormatError);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredObject } from '../storage/index.js';
import { CacheContents } from './contents.js';

const obj = (name: string, node?: string): StoredObject => ({ metadata: { name }, ...(node === undefined ? {} : { spec: { nodeName: node } }) });
const names = (items: StoredObject[]): string[] => items.map((o) => (o.metadata as { name: string }).name);
const byNode = (value: string, name = 'node'): { name: string; value: string; of: (o: StoredObject) => string } => ({
  name, value,
  of: (o) => {
    const spec = o.spec as { nodeName?: string } | undefined;
    if (spec === undefined) throw new Error('no spec');
    return spec.nodeName ?? '';
  },
});

void describe('the contents of a watch cache', () => {
  void it('keeps keys in order through puts and removes, and lists a prefix', () => {
    const c = new CacheContents();
    c.replace([{ key: '/p/b/2', object: obj('b2') }, { key: '/p/a/1', object: obj('a1') }]);
    c.put('/p/a/0', obj('a0'));
    c.put('/p/c/9', obj('c9'));
    c.put('/p/a/1', obj('a1-new'));
    c.remove('/p/b/2');
    c.remove('/p/none');
    assert.deepEqual(names(c.list('/p/')), ['a0', 'a1-new', 'c9']);
    assert.deepEqual(names(c.list('/p/a/')), ['a0', 'a1-new']);
    assert.deepEqual(names(c.list('/p/b/')), []);
    assert.equal(c.size, 3);
    assert.ok(c.bytes() > 0);
    assert.equal(c.get('/p/b/2'), undefined);
  });

  void it('answers an index from the first list naming it and keeps it up to date; objects whose value cannot be computed match every value', () => {
    const c = new CacheContents();
    c.replace([{ key: '/p/x/1', object: obj('1', 'n1') }, { key: '/p/x/2', object: obj('2', 'n2') }, { key: '/p/x/3', object: obj('3') }]);
    assert.deepEqual(names(c.list('/p/', byNode('n1'))), ['1', '3']);
    c.put('/p/x/2', obj('2', 'n1'));
    c.put('/p/x/4', obj('4', 'n2'));
    c.put('/p/x/3', obj('3', 'n3'));
    assert.deepEqual(names(c.list('/p/', byNode('n1'))), ['1', '2']);
    assert.deepEqual(names(c.list('/p/', byNode('n2'))), ['4']);
    c.remove('/p/x/4');
    assert.deepEqual(names(c.list('/p/', byNode('n2'))), []);
    assert.deepEqual(names(c.list('/p/y/', byNode('n1'))), [], 'the prefix still applies');
    c.replace([{ key: '/p/x/9', object: obj('9', 'n1') }]);
    assert.deepEqual(names(c.list('/p/', byNode('n1'))), ['9'], 'a replace drops the indexes; they are made again');
  });

  void it('scans when it already keeps its most indexes, with the same answer', () => {
    const c = new CacheContents();
    c.replace([{ key: '/p/1', object: obj('1', 'n1') }, { key: '/p/2', object: obj('2', 'n2') }]);
    for (let i = 0; i < 8; i++) c.list('/p/', byNode('n1', `index-${i}`));
    assert.deepEqual(names(c.list('/p/', byNode('n1', 'one-too-many'))), ['1', '2'], 'a scan: the caller filters');
  });
});

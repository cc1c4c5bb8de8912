import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { goDump } from '../cm/index.js';
import { formatResizeState, goQuantity, loadResizeState, parseResizeState, storeResizeState } from './checkpoint.js';

const state = {
  allocations: new Map([['uid-1', new Map([['main', { cpu: '100m', memory: '32Mi' }]])]]),
  resizeStatus: new Map([['uid-1', 'InProgress' as const]]),
};

void describe('pod_status_manager_state', () => {
  void it('is upstream\'s JSON: allocation and resize status entries with a checksum', () => {
    const parsed = JSON.parse(formatResizeState(state)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ['allocationEntries', 'resizeStatusEntries', 'checksum']);
    assert.deepEqual(parsed.allocationEntries, { 'uid-1': { main: { cpu: '100m', memory: '32Mi' } } });
    assert.deepEqual(parsed.resizeStatusEntries, { 'uid-1': 'InProgress' });
    assert.equal(typeof parsed.checksum, 'number');
    const empty = JSON.parse(formatResizeState({ allocations: new Map(), resizeStatus: new Map() })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(empty), ['checksum'], 'empty maps are left out (omitempty)');
  });

  void it('reads back what it wrote, and refuses an edited file naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'resize-state-'));
    try {
      const path = join(dir, 'pod_status_manager_state');
      assert.equal(loadResizeState(path).allocations.size, 0, 'no file: empty');
      storeResizeState(path, state);
      const back = loadResizeState(path);
      assert.deepEqual(back.allocations.get('uid-1')?.get('main'), { cpu: '100m', memory: '32Mi' });
      assert.equal(back.resizeStatus.get('uid-1'), 'InProgress');
      writeFileSync(path, readFileSync(path, 'utf8').replace('100m', '200m'));
      assert.throws(() => loadResizeState(path), (err: Error) => err.message.includes(path) && err.message.includes('checksum mismatch'));
      assert.throws(() => parseResizeState(path, '{"resizeStatusEntries":{"u":"Maybe"},"checksum":1}'), /resizeStatusEntries\[u\] "Maybe" is not one of Proposed, InProgress, Deferred, Infeasible/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void it('prints quantities as apimachinery\'s ParseQuantity leaves them (the text kept only in canonical form)', () => {
    const q = (text: string): string => goDump(goQuantity(text));
    assert.equal(q('100m'), '(resource.Quantity){i:(resource.int64Amount){value:(int64)100 scale:(resource.Scale)-3} d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)100m Format:(resource.Format)DecimalSI}');
    assert.match(q('1000m'), /value:\(int64\)1000 scale:\(resource.Scale\)-3\}.* s:\(string\) Format/, 'not canonical (1): no text');
    assert.match(q('0.5'), /value:\(int64\)5 scale:\(resource.Scale\)-1\}.* s:\(string\) Format/);
    assert.match(q('1Gi'), /value:\(int64\)1073741824 scale:\(resource.Scale\)0\}.* s:\(string\)1Gi Format:\(resource.Format\)BinarySI/);
    assert.match(q('128Mi'), /value:\(int64\)134217728 .* s:\(string\) Format:\(resource.Format\)BinarySI/, 'not canonical (128Mi is 0.125Gi): no text');
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { goDump } from '../cm/index.js';
import { checkpointQuantity, formatResizeState, goQuantity, loadResizeState, parseResizeState, storeResizeState } from './checkpoint.js';

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

  /*
   * Worked out from upstream v1.28's code, not from ours: the kubelet's checkpoint is the struct
   * *state.PodResourceAllocationCheckpoint with Checksum 0, printed by spew's %#v (Indent " ",
   * SortKeys, DisableMethods, SpewKeys: types in parentheses except on map keys, map values and
   * the target of a typed pointer; a nil map `<nil>`; strings unquoted), hashed with FNV-1a 32.
   * Quantities as ParseQuantity leaves the file's text: "100m" {100 -3 s:"100m" DecimalSI},
   * "128Mi" {134217728 0 s:"" BinarySI} (128&7 = 0: not kept), "1" {1 0 s:"1"}, "1536Mi"
   * {1610612736 0 s:""}, "0" {0 0 s:"0"} (its own shortcut), "1G" {1 9 s:"1G"}. The printed text:
   *
   * (*state.PodResourceAllocationCheckpoint){AllocationEntries:(map[string]map[string]v1.ResourceList)map[
   *   uid-1:map[main:map[cpu:{i:(resource.int64Amount){value:(int64)100 scale:(resource.Scale)-3}
   *   d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)100m Format:(resource.Format)DecimalSI}
   *   memory:{... value:(int64)134217728 scale:(resource.Scale)0} ... s:(string) Format:(resource.Format)BinarySI}]
   *   sidecar:<nil>] uid-2:map[app:map[cpu:{...1 0...s:(string)1...} memory:{...1610612736 0...s:(string) ...BinarySI}]
   *   helper:map[cpu:{...0 0...s:(string)0...} memory:{...1 9...s:(string)1G...}]]]
   *   ResizeStatusEntries:(map[string]v1.PodResizeStatus)map[uid-1:InProgress uid-2:Deferred] Checksum:(checksum.Checksum)0}
   *
   * (one line, single spaces), whose FNV-1a is 2388050135; the JSON is encoding/json's of the
   * struct (map keys sorted, a nil list null, each Quantity its MarshalJSON text).
   */
  const UPSTREAM = '{"allocationEntries":{"uid-1":{"main":{"cpu":"100m","memory":"128Mi"},"sidecar":null},'
    + '"uid-2":{"app":{"cpu":"1","memory":"1536Mi"},"helper":{"cpu":"0","memory":"1G"}}},'
    + '"resizeStatusEntries":{"uid-1":"InProgress","uid-2":"Deferred"},"checksum":2388050135}';

  void it("writes the file upstream's kubelet writes for the same pods, checksum included", () => {
    const pods = {
      allocations: new Map([
        ['uid-1', new Map([['main', { cpu: '100m', memory: '128Mi' }], ['sidecar', {}]])],
        // As the pods give them: upstream's API server would have sent "1" and "1536Mi".
        ['uid-2', new Map([['app', { cpu: '1000m', memory: '1.5Gi' }], ['helper', { cpu: '0', memory: '1G' }]])],
      ]),
      resizeStatus: new Map([['uid-1', 'InProgress' as const], ['uid-2', 'Deferred' as const]]),
    };
    assert.equal(formatResizeState(pods), UPSTREAM);
    assert.equal(formatResizeState({ allocations: new Map(), resizeStatus: new Map() }), '{"checksum":670531192}');
  });

  void it("reads upstream's file: a null list is a container without requests, an empty one hashes as an empty map", () => {
    const back = parseResizeState('/state', UPSTREAM);
    assert.deepEqual(back.allocations.get('uid-1')?.get('sidecar'), {});
    assert.deepEqual(back.allocations.get('uid-2')?.get('app'), { cpu: '1', memory: '1536Mi' });
    assert.equal(back.resizeStatus.get('uid-2'), 'Deferred');
    // The same with `map[]` for the sidecar (upstream's hash of `{}`), worked out as above: 2868361910.
    const empty = '{"allocationEntries":{"uid-1":{"main":{"cpu":"100m"},"sidecar":{}}},"checksum":2868361910}';
    assert.deepEqual(parseResizeState('/state', empty).allocations.get('uid-1')?.get('sidecar'), {});
    assert.throws(() => parseResizeState('/state', empty.replace('{}', 'null')), /checksum mismatch/);
  });

  void it('writes a quantity as upstream would have received it: kept when ParseQuantity keeps it, else canonical', () => {
    assert.deepEqual(['100m', '128Mi', '1000m', '1.5Gi', '0', '0.5', '1e3', '1G', '512Mi', '134217728', '64000000'].map(checkpointQuantity),
      ['100m', '128Mi', '1', '1536Mi', '0', '500m', '1e3', '1G', '512Mi', '134217728', '64M']);
    assert.equal(checkpointQuantity(2), '2', 'a number given in the pod');
    assert.match(goDump(goQuantity('0')), /value:\(int64\)0 scale:\(resource.Scale\)0\}.* s:\(string\)0 Format:\(resource.Format\)DecimalSI/, '"0" is kept');
  });
});

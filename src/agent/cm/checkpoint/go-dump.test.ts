import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fnv32a, goDump, goInt, goString, type GoValue } from './go-dump.js';

function cpuCheckpoint(policy: string, defaultSet: string, entries: Record<string, Record<string, string>>): GoValue {
  const inner = (m: Record<string, string>): GoValue => ({ kind: 'map', type: 'map[string]string', entries: Object.entries(m).map(([k, v]) => [goString(k), goString(v)] as const) });
  return {
    kind: 'ptr', type: '*state.CPUManagerCheckpoint', elem: {
      kind: 'struct', type: 'state.CPUManagerCheckpoint', fields: [
        ['PolicyName', goString(policy)],
        ['DefaultCPUSet', goString(defaultSet)],
        ['Entries', { kind: 'map', type: 'map[string]map[string]string', entries: Object.entries(entries).map(([k, v]) => [goString(k), inner(v)] as const) }],
        ['Checksum', goInt(0, 'checksum.Checksum')],
      ],
    },
  };
}

void describe('the Go dump behind checkpoint checksums', () => {
  void it('prints a CPU manager checkpoint as spew does', () => {
    assert.equal(goDump(cpuCheckpoint('static', '0-1', { pod: { c: '2' } })),
      '(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0-1 Entries:(map[string]map[string]string)map[pod:map[c:2]] Checksum:(checksum.Checksum)0}');
  });

  void it("matches the checksums of upstream's CPU manager test files", () => {
    assert.equal(fnv32a(goDump(cpuCheckpoint('none', '4-6', {}))), 354655845);
    assert.equal(fnv32a(goDump(cpuCheckpoint('none', '1-3', { pod: { container1: '4-6', container2: '1-3' } }))), 3610638499);
  });

  void it("matches the checksum of upstream's memory manager test file (pointers inside maps, slices, sorted int keys)", () => {
    const table: GoValue = { kind: 'ptr', type: '*state.MemoryTable', elem: { kind: 'struct', type: 'state.MemoryTable', fields: [
      ['TotalMemSize', goInt(2048, 'uint64')], ['SystemReserved', goInt(512, 'uint64')], ['Allocatable', goInt(1536, 'uint64')],
      ['Reserved', goInt(512, 'uint64')], ['Free', goInt(1024, 'uint64')],
    ] } };
    const node: GoValue = { kind: 'ptr', type: '*state.NUMANodeState', elem: { kind: 'struct', type: 'state.NUMANodeState', fields: [
      ['NumberOfAssignments', goInt(0, 'int')],
      ['MemoryMap', { kind: 'map', type: 'map[v1.ResourceName]*state.MemoryTable', entries: [[goString('memory', 'v1.ResourceName'), table]] }],
      ['Cells', { kind: 'slice', type: '[]int', items: [] }],
    ] } };
    const block: GoValue = { kind: 'struct', type: 'state.Block', fields: [
      ['NUMAAffinity', { kind: 'slice', type: '[]int', items: [goInt(0, 'int')] }], ['Type', goString('memory', 'v1.ResourceName')], ['Size', goInt(512, 'uint64')],
    ] };
    const checkpoint: GoValue = { kind: 'ptr', type: '*state.MemoryManagerCheckpoint', elem: { kind: 'struct', type: 'state.MemoryManagerCheckpoint', fields: [
      ['PolicyName', goString('static')],
      ['MachineState', { kind: 'map', type: 'state.NUMANodeMap', entries: [[goInt(0, 'int'), node]] }],
      ['Entries', { kind: 'map', type: 'state.ContainerMemoryAssignments', entries: [[goString('pod'), { kind: 'map', type: 'map[string][]state.Block', entries: [[goString('container1'), { kind: 'slice', type: '[]state.Block', items: [block] }]] }]] }],
      ['Checksum', goInt(0, 'checksum.Checksum')],
    ] } };
    assert.equal(fnv32a(goDump(checkpoint)), 4215593881);
  });

  void it('sorts integer keys numerically and prints nil slices and maps as <nil>', () => {
    const m: GoValue = { kind: 'map', type: 'map[int][]int', entries: [[goInt(10, 'int'), { kind: 'slice', type: '[]int', items: null }], [goInt(9, 'int'), { kind: 'slice', type: '[]int', items: [] }]] };
    assert.equal(goDump(m), '(map[int][]int)map[9:[] 10:<nil>]');
    const maps: GoValue = { kind: 'map', type: 'map[string]map[string]string', entries: [[goString('a'), { kind: 'map', type: 'map[string]string', entries: null }], [goString('b'), { kind: 'map', type: 'map[string]string', entries: [] }]] };
    assert.equal(goDump(maps), '(map[string]map[string]string)map[a:<nil> b:map[]]');
    assert.equal(goDump({ kind: 'map', type: 'map[string]string', entries: null }), '(map[string]string)<nil>');
  });
});

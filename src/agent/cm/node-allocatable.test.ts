import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  allocatableAbsolute, allocatableReservation, effectiveReserved, podsCgroupConfig, reservedCgroupConfig, statusReservation, type NodeResources, type ReservationSettings,
} from './node-allocatable.js';
import { qosMemoryLimits, qosReservedPercent } from './qos-reserve.js';
import { BURSTABLE, guaranteedPod, podWith } from './fixtures.js';

const GI = 1024 ** 3;
const MI = 1024 ** 2;
const NODE: NodeResources = { cpuMilli: 4000, memoryBytes: 16 * GI, pids: 32768, hugepages: [{ pageSizeBytes: 2 * MI, bytes: GI }] };
const SETTINGS: ReservationSettings = {
  systemReserved: { cpu: '500m', memory: '1Gi', pid: '1000' },
  orchReserved: { cpu: '250m', memory: '512Mi' },
  reservedSystemCPUs: '',
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
  ignoreEviction: false,
};

void describe('node allocatable', () => {
  void it('subtracts the reservations and the hugepages from capacity for the pods cgroup, not the eviction threshold', () => {
    const a = allocatableAbsolute(SETTINGS, NODE);
    assert.equal(a.cpuMilli, 3250);
    assert.equal(a.memoryBytes, 16 * GI - GI - 512 * MI - GI);
    assert.equal(a.pids, 31768);
    assert.deepEqual(podsCgroupConfig(SETTINGS, NODE, true), {
      cpuShares: 3328, memoryLimitBytes: a.memoryBytes, pidsLimit: 31768, hugepageLimits: [{ pageSizeBytes: 2 * MI, limitBytes: GI }],
    });
    assert.deepEqual(podsCgroupConfig(SETTINGS, NODE, false).memoryLimitBytes, 16 * GI, 'not enforced: the capacity');
  });

  void it('reserves for node status and the managers with the hard eviction threshold, unless told to ignore it', () => {
    assert.deepEqual([...allocatableReservation(SETTINGS, NODE)].sort(), [['cpu', 750], ['memory', GI + 512 * MI + 100 * MI], ['pid', 1000]]);
    const ignoring = { ...SETTINGS, ignoreEviction: true };
    assert.equal(allocatableReservation(ignoring, NODE).get('memory'), GI + 512 * MI);
    assert.deepEqual(statusReservation(ignoring).evictionHard, {});
    assert.equal(allocatableReservation({ ...SETTINGS, evictionHard: { 'memory.available': '10%' } }, NODE).get('memory'), GI + 512 * MI + Math.floor(1.6 * GI));
  });

  void it('counts reservedSystemCPUs as the CPU reservation, dropping orchReserved.cpu', () => {
    const pinned = { ...SETTINGS, reservedSystemCPUs: '0,2' };
    assert.deepEqual(effectiveReserved(pinned), { systemReserved: { cpu: '2', memory: '1Gi', pid: '1000' }, orchReserved: { memory: '512Mi' } });
    assert.equal(allocatableReservation(pinned, NODE).get('cpu'), 2000);
    assert.equal(allocatableAbsolute(pinned, NODE).cpuMilli, 2000);
    assert.deepEqual(statusReservation(pinned).orchReserved, { memory: '512Mi' });
  });

  void it('gives a reserved cgroup its reservation', () => {
    assert.deepEqual(reservedCgroupConfig({ cpu: '500m', memory: '1Gi', pid: '1000', 'ephemeral-storage': '1Gi' }), { cpuShares: 512, memoryLimitBytes: GI, pidsLimit: 1000 });
  });
});

void describe('qosReserved memory limits', () => {
  void it('holds back the percentage of the higher classes requests', () => {
    const pods = [guaranteedPod('g1', ['1']), podWith('b1', [{ requests: { memory: '100Mi' } }]), podWith('b2', [BURSTABLE]), podWith('e1', [undefined])];
    const limits = qosMemoryLimits(pods, { percent: 50, allocatableBytes: GI });
    assert.deepEqual(limits, { Burstable: GI - 32 * MI, BestEffort: GI - 32 * MI - 50 * MI });
    assert.equal(qosReservedPercent({ memory: '50%' }), 50);
    assert.equal(qosReservedPercent({}), undefined);
  });
});

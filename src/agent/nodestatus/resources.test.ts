import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GiB, fakeMachine } from './fakes.js';
import { NODE_RESOURCE_INVALID, allocatableOf, capacityOf, formatAmounts, podCapacity, reservationOf } from './resources.js';

const none = { systemReserved: {}, orchReserved: {}, evictionHard: {} };

void describe('capacity and allocatable', () => {
  void it('pods: maxPods, or cores × podsPerCore when smaller', () => {
    assert.equal(podCapacity(4, 110, 0), 110);
    assert.equal(podCapacity(4, 110, 10), 40);
    assert.equal(podCapacity(64, 110, 10), 110);
  });

  void it('reports cpu in cores, memory and storage in binary units, hugepages', () => {
    const cap = capacityOf(fakeMachine({ hugepages: new Map([['hugepages-2Mi', 0n], ['hugepages-1Gi', GiB]]) }), 110);
    assert.deepEqual(formatAmounts(cap), {
      cpu: '4', 'ephemeral-storage': '100Gi', 'hugepages-1Gi': '1Gi', 'hugepages-2Mi': '0', memory: '8Gi', pods: '110',
    });
  });

  void it('omits ephemeral-storage when the root filesystem could not be measured', () => {
    const cap = capacityOf(fakeMachine({ ephemeralStorageBytes: undefined }), 110);
    assert.equal(cap.has('ephemeral-storage'), false);
  });

  void it('subtracts system and orch reservations and hard eviction thresholds', () => {
    const cap = capacityOf(fakeMachine(), 110);
    const alloc = formatAmounts(allocatableOf(cap, {
      systemReserved: { cpu: '500m', memory: '1Gi', pid: '1000' },
      orchReserved: { cpu: '250m', memory: '512Mi', 'ephemeral-storage': '1Gi' },
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'imagefs.available': '15%', 'nodefs.inodesFree': '5%' },
    }));
    // 8Gi − 1Gi − 512Mi − 100Mi = 6556Mi; 100Gi − 1Gi − 10% of 100Gi = 89Gi.
    assert.equal(alloc.cpu, '3250m');
    assert.equal(alloc.memory, '6556Mi');
    assert.equal(alloc['ephemeral-storage'], '89Gi');
    // Amounts that are not whole Ki print in bytes.
    const small = capacityOf(fakeMachine({ ephemeralStorageBytes: 1_000_001_024n }), 110);
    const odd = formatAmounts(allocatableOf(small, { ...none, evictionHard: { 'nodefs.available': '7%' } }));
    assert.equal(formatAmounts(small)['ephemeral-storage'], '1000001024');
    assert.equal(odd['ephemeral-storage'], '930000953');
    assert.equal(alloc.pods, '110');
  });

  void it('takes the hugepages capacity out of allocatable memory and never goes below zero', () => {
    const cap = capacityOf(fakeMachine({ memoryBytes: 2n * GiB, hugepages: new Map([['hugepages-1Gi', GiB]]) }), 110);
    const alloc = formatAmounts(allocatableOf(cap, { ...none, systemReserved: { memory: '512Mi', cpu: '8' } }));
    assert.equal(alloc.memory, '512Mi');
    assert.equal(alloc.cpu, '0');
    assert.equal(alloc['hugepages-1Gi'], '1Gi');
  });

  void it('a percentage threshold is of capacity', () => {
    const cap = capacityOf(fakeMachine({ memoryBytes: 1000n * 1024n }), 110);
    assert.equal(reservationOf(cap, { ...none, evictionHard: { 'memory.available': '5%' } }).get('memory'), 51200n);
  });

  void it('rejects unparsable amounts with NODE_RESOURCE_INVALID naming the field', () => {
    const cap = capacityOf(fakeMachine(), 110);
    assert.throws(() => allocatableOf(cap, { ...none, systemReserved: { memory: 'lots' } }), (err: unknown) => {
      assert.equal((err as { code: string }).code, NODE_RESOURCE_INVALID);
      assert.equal((err as { subject: string }).subject, 'systemReserved.memory');
      return true;
    });
    assert.throws(() => allocatableOf(cap, { ...none, evictionHard: { 'nodefs.available': '150%' } }), /evictionHard.nodefs.available/);
  });
});

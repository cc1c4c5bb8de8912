import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Lease, Node, Pod } from './kube.js';
import { eventRow, latestEvents, leaseAge, nodeHealth, nodeResources, podRow, podStatus, requestsByNode } from './model.js';
import { formatBytes, formatCores, parseQuantity } from './quantity.js';

const pod = (status: NonNullable<Pod['status']>, spec: NonNullable<Pod['spec']> = { containers: [{ name: 'c' }] }, meta: NonNullable<Pod['metadata']> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', ...meta }, spec, status,
});

void describe('the console model', () => {
  void it('computes kubectl\'s STATUS column', () => {
    assert.equal(podStatus(pod({ phase: 'Pending' })), 'Pending');
    assert.equal(podStatus(pod({ phase: 'Pending', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ContainerCreating' } } }] })), 'ContainerCreating');
    assert.equal(podStatus(pod({ phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] })), 'Running');
    assert.equal(podStatus(pod({ phase: 'Running', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'CrashLoopBackOff' } } }] })), 'CrashLoopBackOff');
    assert.equal(podStatus(pod({ phase: 'Failed', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 3 } } }] })), 'ExitCode:3');
    assert.equal(podStatus(pod({ phase: 'Failed', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 137, signal: 9 } } }] })), 'Signal:9');
    assert.equal(podStatus(pod({ phase: 'Failed', reason: 'Evicted' })), 'Evicted');
    const inits = { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'c' }] };
    assert.equal(podStatus(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 0 } } }, { name: 'i2', state: { running: {} } }] }, inits)), 'Init:1/2');
    assert.equal(podStatus(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 1, reason: 'Error' } } }] }, inits)), 'Init:Error');
    assert.equal(podStatus(pod({ phase: 'Running' }, undefined, { deletionTimestamp: '2024-01-01T00:00:00Z' })), 'Terminating');
  });

  void it('makes rows with readiness, restarts, tone and the requests the scheduler counts', () => {
    const row = podRow(pod({
      phase: 'Running',
      containerStatuses: [{ name: 'a', ready: true, restartCount: 2, state: { running: {} } }, { name: 'b', ready: false, restartCount: 1, state: { running: {} } }],
    }, {
      nodeName: 'n1',
      initContainers: [{ name: 'init', resources: { requests: { cpu: '2' } } }, { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      containers: [{ name: 'a', resources: { requests: { cpu: '250m', memory: '128Mi' } } }, { name: 'b', resources: { requests: { cpu: '500m' } } }],
      overhead: { cpu: '10m' },
    }));
    assert.deepEqual([row.key, row.node, row.ready, row.total, row.restarts, row.status, row.tone, row.active], ['ns/p', 'n1', 1, 2, 3, 'Running', 'warn', true]);
    assert.equal(row.requests.cpu, 2.01);
    assert.equal(row.requests.memory, 192 * 2 ** 20);
    const sums = requestsByNode([row, { ...row, key: 'ns/q', active: false }, { ...row, key: 'ns/r', node: '' }]);
    assert.deepEqual([...sums.keys()], ['n1']);
    const node: Node = { metadata: { name: 'n1' }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '3500m', memory: '7Gi', pods: '110' } } };
    const use = nodeResources(node, sums.get('n1'));
    assert.deepEqual(use.cpu, { capacity: 4, allocatable: 3.5, requested: 2.01 });
    assert.deepEqual(use.pods, { capacity: 110, allocatable: 110, requested: 1 });
  });

  void it('reads a node\'s health and the age of its lease', () => {
    assert.deepEqual(nodeHealth({ status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'MemoryPressure', status: 'True' }, { type: 'DiskPressure', status: 'False' }] } }),
      { ready: 'True', label: 'Ready', tone: 'warn', reason: '', message: '', pressures: ['MemoryPressure'] });
    assert.equal(nodeHealth({ status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] } }).tone, 'unknown');
    assert.equal(nodeHealth({ spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'False' }] } }).label, 'NotReady,SchedulingDisabled');
    assert.equal(nodeHealth({}).ready, 'Unknown');
    const lease: Lease = { spec: { renewTime: '2024-05-01T10:00:00.000000Z', leaseDurationSeconds: 40 } };
    const renewed = Date.parse('2024-05-01T10:00:00Z');
    assert.deepEqual(leaseAge(lease, renewed + 5000), { ageMs: 5000, expired: false });
    assert.deepEqual(leaseAge(lease, renewed + 41_000), { ageMs: 41_000, expired: true });
    assert.deepEqual(leaseAge(undefined, renewed), { ageMs: undefined, expired: false });
  });

  void it('keeps the latest event of each object', () => {
    const e = (name: string, pod: string, time: string, reason: string): ReturnType<typeof eventRow> => eventRow({
      metadata: { name, namespace: 'ns' }, regarding: { kind: 'Pod', namespace: 'ns', name: pod }, reason, note: `${reason} note`, type: 'Normal',
      eventTime: time, reportingController: 'nodeagent',
    } as never);
    const rows = [e('e1', 'p', '2024-05-01T10:00:00Z', 'Pulled'), e('e2', 'p', '2024-05-01T10:00:05Z', 'Started'), e('e3', 'q', '2024-05-01T10:00:01Z', 'Killing')];
    const latest = latestEvents(rows, 'Pod');
    assert.deepEqual([...latest].map(([k, v]) => `${k}:${v.reason}`), ['ns/p:Started', 'ns/q:Killing']);
    assert.ok(rows[0]?.text.includes('pulled note'));
  });

  void it('parses and prints quantities', () => {
    assert.equal(parseQuantity('250m'), 0.25);
    assert.equal(parseQuantity('128Mi'), 128 * 2 ** 20);
    assert.equal(parseQuantity('1G'), 1e9);
    assert.equal(parseQuantity('123456789n'), 0.123456789);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('12Kb'), undefined);
    assert.equal(formatCores(0.25), '250m');
    assert.equal(formatCores(1.5), '1.5');
    assert.equal(formatBytes(1536 * 2 ** 20), '1.5Gi');
    assert.equal(formatBytes(512), '512');
  });
});

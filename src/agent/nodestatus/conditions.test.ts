import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { READY_MESSAGE, aggregate, computeConditions, readyProblems, type ConditionInputs } from './conditions.js';

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5);
const healthy: ConditionInputs = {
  runtime: { runtime: { ready: true }, network: { ready: true } },
  health: undefined,
  pressure: { memory: false, disk: false, pid: false },
  capacity: ['cpu', 'memory', 'pods', 'ephemeral-storage'],
};

void describe('node conditions', () => {
  void it('first report: pressure conditions False with events, Ready True without one', () => {
    const { conditions, events } = computeConditions(undefined, healthy, T0, 'n1');
    assert.deepEqual(conditions.map((c) => [c.type, c.status, c.reason]), [
      ['MemoryPressure', 'False', 'NodeagentHasSufficientMemory'],
      ['DiskPressure', 'False', 'NodeagentHasNoDiskPressure'],
      ['PIDPressure', 'False', 'NodeagentHasSufficientPID'],
      ['Ready', 'True', 'NodeagentReady'],
    ]);
    assert.equal(conditions[3]?.message, READY_MESSAGE);
    assert.equal(conditions[0]?.lastHeartbeatTime, '2024-01-02T03:04:05Z');
    assert.deepEqual(events.map((e) => e.reason), ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']);
    assert.equal(events[0]?.message, 'Node n1 status is now: NodeHasSufficientMemory');
  });

  void it('keeps lastTransitionTime while the status holds, moves the heartbeat', () => {
    const first = computeConditions(undefined, healthy, T0, 'n1').conditions;
    const { conditions, events } = computeConditions(first, healthy, T0 + 10_000, 'n1');
    assert.deepEqual(events, []);
    for (const c of conditions) {
      assert.equal(c.lastTransitionTime, '2024-01-02T03:04:05Z');
      assert.equal(c.lastHeartbeatTime, '2024-01-02T03:04:15Z');
    }
  });

  void it('goes NotReady with the reasons and back, with events and new transition times', () => {
    const first = computeConditions(undefined, healthy, T0, 'n1').conditions;
    const down: ConditionInputs = {
      ...healthy,
      runtime: { runtime: { ready: true }, network: { ready: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' } },
    };
    const second = computeConditions(first, down, T0 + 10_000, 'n1');
    const ready = second.conditions.find((c) => c.type === 'Ready');
    assert.ok(ready);
    assert.equal(ready.status, 'False');
    assert.equal(ready.reason, 'NodeagentNotReady');
    assert.equal(ready.message, 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized');
    assert.equal(ready.lastTransitionTime, '2024-01-02T03:04:15Z');
    assert.deepEqual(second.events.map((e) => e.reason), ['NodeNotReady']);
    const third = computeConditions(second.conditions, healthy, T0 + 20_000, 'n1');
    assert.deepEqual(third.events.map((e) => e.reason), ['NodeReady']);
  });

  void it('reports pressure and keeps conditions owned by others', () => {
    const others = [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }];
    const { conditions, events } = computeConditions(others, { ...healthy, pressure: { memory: true, disk: true, pid: true } }, T0, 'n1');
    assert.deepEqual(conditions[0], others[0]);
    assert.deepEqual(conditions.slice(1, 4).map((c) => [c.status, c.reason]), [
      ['True', 'NodeagentHasInsufficientMemory'], ['True', 'NodeagentHasDiskPressure'], ['True', 'NodeagentHasInsufficientPID'],
    ]);
    assert.deepEqual(events.map((e) => e.reason), ['NodeHasInsufficientMemory', 'NodeHasDiskPressure', 'NodeHasInsufficientPID']);
  });

  void it('lists every reason for not being ready', () => {
    assert.deepEqual(readyProblems(healthy), []);
    const problems = readyProblems({
      runtime: { error: 'connection refused' }, health: 'PLEG is not healthy: pleg was last seen active 4m0s ago; threshold is 3m0s',
      pressure: healthy.pressure, capacity: ['cpu', 'pods'],
    });
    assert.deepEqual(problems, [
      'container runtime is down: connection refused',
      'PLEG is not healthy: pleg was last seen active 4m0s ago; threshold is 3m0s',
      'missing node capacity for resources: memory, ephemeral-storage',
    ]);
    assert.equal(aggregate(['a']), 'a');
    assert.equal(aggregate(['a', 'b']), '[a, b]');
    assert.match(readyProblems({ ...healthy, runtime: { runtime: { ready: false, reason: 'R', message: 'M' }, network: { ready: true } } })[0] ?? '', /^container runtime not ready: RuntimeReady=false reason:R message:M$/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import { admitResize, containerResizeAction } from './decide.js';

const node = { cpuMilli: 2000, memoryBytes: 4 * 1024 ** 3 };

void describe('resize decisions', () => {
  void it('admits what fits beside the other pods, defers what does not, and finds infeasible what exceeds the node', () => {
    assert.equal(admitResize({ cpuMilli: 500, memoryBytes: 1024 ** 3 }, { cpuMilli: 1500, memoryBytes: 1024 ** 3 }, node), 'InProgress');
    assert.equal(admitResize({ cpuMilli: 600, memoryBytes: 1024 ** 3 }, { cpuMilli: 1500, memoryBytes: 0 }, node), 'Deferred');
    assert.equal(admitResize({ cpuMilli: 100, memoryBytes: 3 * 1024 ** 3 }, { cpuMilli: 0, memoryBytes: 2 * 1024 ** 3 }, node), 'Deferred');
    assert.equal(admitResize({ cpuMilli: 2001, memoryBytes: 0 }, { cpuMilli: 0, memoryBytes: 0 }, node), 'Infeasible');
    assert.equal(admitResize({ cpuMilli: 0, memoryBytes: 5 * 1024 ** 3 }, { cpuMilli: 0, memoryBytes: 0 }, node), 'Infeasible');
  });

  void it('updates in place, restarts where resizePolicy says so, and ignores memory requests', () => {
    const current = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } };
    const c = (resources: NonNullable<Container['resources']>, resizePolicy?: Container['resizePolicy']): Container => ({ name: 'main', resources, ...(resizePolicy === undefined ? {} : { resizePolicy }) });
    assert.equal(containerResizeAction(c(current), current), 'none');
    assert.equal(containerResizeAction(c({ ...current, limits: { cpu: '0.2', memory: '64Mi' } }), current), 'none', 'quantities by value');
    assert.equal(containerResizeAction(c({ ...current, requests: { cpu: '100m', memory: '48Mi' } }), current), 'none', 'a memory request is not enforced');
    assert.equal(containerResizeAction(c({ ...current, limits: { cpu: '300m', memory: '64Mi' } }), current), 'update');
    const memoryRestarts = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
    assert.equal(containerResizeAction(c({ ...current, limits: { cpu: '300m', memory: '64Mi' } }, memoryRestarts), current), 'update');
    assert.equal(containerResizeAction(c({ ...current, limits: { cpu: '200m', memory: '96Mi' } }, memoryRestarts), current), 'restart');
    assert.equal(containerResizeAction(c({ ...current, requests: { cpu: '150m', memory: '32Mi' } }, [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }]), current), 'restart');
  });
});

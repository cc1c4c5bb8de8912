import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podDefinition } from '../resources/pods/index.js';
import type { StrategyContext, WireObject } from '../registry/index.js';
import { addDefaultTolerations } from './default-tolerations.js';
import { withDefaultTolerationSeconds } from './index.js';

const OPTIONS = { notReadySeconds: 300, unreachableSeconds: 120 };
const ctx: StrategyContext = { user: { name: 'u', uid: '', groups: [] }, now: new Date('2024-05-01T10:00:00Z') };

function pod(tolerations?: WireObject[]): WireObject {
  return { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...(tolerations === undefined ? {} : { tolerations }) } };
}

const tolerationsOf = (p: WireObject): unknown => (p.spec as { tolerations?: unknown }).tolerations;

void describe('DefaultTolerationSeconds', () => {
  void it('adds NoExecute tolerations of not-ready and unreachable with the configured seconds', () => {
    const p = pod();
    addDefaultTolerations(p, OPTIONS);
    assert.deepEqual(tolerationsOf(p), [
      { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
    ]);
  });

  void it('keeps a toleration the pod has for a taint (by key, or an empty key; NoExecute or any effect)', () => {
    const own = { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 };
    const p = pod([own]);
    addDefaultTolerations(p, OPTIONS);
    assert.deepEqual(tolerationsOf(p), [own, { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
    const everything = pod([{ operator: 'Exists' }]);
    addDefaultTolerations(everything, OPTIONS);
    assert.deepEqual(tolerationsOf(everything), [{ operator: 'Exists' }]);
    // A NoSchedule toleration of the key does not count: the NoExecute one is still added.
    const noSchedule = pod([{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }]);
    addDefaultTolerations(noSchedule, OPTIONS);
    assert.equal((tolerationsOf(noSchedule) as unknown[]).length, 3);
  });

  void it('runs before the pod definition\'s own create defaults, and leaves the rest of the definition as it is', () => {
    const def = withDefaultTolerationSeconds(podDefinition, OPTIONS);
    const p = pod();
    def.strategy.prepareForCreate?.(p, ctx);
    assert.equal((tolerationsOf(p) as unknown[]).length, 2);
    assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
    assert.equal(def.plural, 'pods');
    assert.equal(def.schema, podDefinition.schema);
  });

  void it('puts them back on updates of the pod itself (an apply of the manifest\'s tolerations), not of its subresources', () => {
    const def = withDefaultTolerationSeconds(podDefinition, OPTIONS);
    const old = pod();
    addDefaultTolerations(old, OPTIONS);
    const applied = pod([{ key: 'k', operator: 'Exists' }]);
    def.strategy.prepareForUpdate?.(applied, old, ctx);
    assert.deepEqual((tolerationsOf(applied) as { key: string }[]).map((t) => t.key), ['k', 'node.orch.io/not-ready', 'node.orch.io/unreachable']);
    const status = pod();
    def.strategy.prepareForUpdate?.(status, old, { ...ctx, subresource: 'status' });
    assert.equal(tolerationsOf(status), undefined);
  });
});

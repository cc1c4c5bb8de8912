import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldErrors } from '../../status/index.js';
import { podDefinitionWith } from './index.js';

type Obj = Record<string, unknown>;
const now = new Date('2024-05-01T12:00:00Z');
const ctx = { user: { name: 'u', uid: '', groups: [] }, now };
const on = podDefinitionWith({ inPlacePodVerticalScaling: true }).strategy;
const off = podDefinitionWith({ inPlacePodVerticalScaling: false }).strategy;

const burstable = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } };
function pod(resources: Obj, extra: Obj = {}): Obj {
  return { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', resources, ...extra }] }, status: {} };
}
/** A created pod (defaults applied), running with its requests allocated. */
function created(strategy: typeof on, resources: Obj, extra: Obj = {}): Obj {
  const p = pod(resources, extra);
  strategy.prepareForCreate?.(p, ctx);
  p.status = { ...(p.status as Obj), phase: 'Running', containerStatuses: [{ name: 'c', allocatedResources: resources.requests }] };
  return p;
}
function update(strategy: typeof on, old: Obj, resources: Obj): { errors: FieldErrors; next: Obj } {
  const next = structuredClone(old);
  ((next.spec as Obj).containers as Obj[])[0] = { ...(((next.spec as Obj).containers as Obj[])[0]), resources };
  strategy.prepareForUpdate?.(next, old, ctx);
  const errors = new FieldErrors();
  strategy.validateUpdate(next, old, errors, ctx);
  return { errors, next };
}
const messages = (e: FieldErrors): string[] => e.list.map((x) => `${x.field}: ${x.message}`);

void describe('pod resize on the API server', () => {
  void it('defaults resizePolicy NotRequired for requested cpu and memory with the gate on only', () => {
    const p = created(on, burstable, { resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] });
    assert.deepEqual(((p.spec as Obj).containers as Obj[])[0]?.resizePolicy, [
      { resourceName: 'memory', restartPolicy: 'RestartContainer' }, { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    ]);
    const q = created(off, burstable, { resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] });
    assert.equal(((q.spec as Obj).containers as Obj[])[0]?.resizePolicy, undefined, 'dropped with the gate off');
  });

  void it('accepts a cpu/memory change with the gate on and marks the resize Proposed', () => {
    const old = created(on, burstable);
    const { errors, next } = update(on, old, { requests: { cpu: '150m', memory: '32Mi' }, limits: { cpu: '300m', memory: '64Mi' } });
    assert.deepEqual(messages(errors), []);
    assert.equal((next.status as Obj).resize, 'Proposed');
    const limitsOnly = update(on, old, { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '300m', memory: '64Mi' } });
    assert.deepEqual(messages(limitsOnly.errors), []);
    assert.equal((limitsOnly.next.status as Obj).resize, undefined, 'the requests are what was allocated: nothing to propose');
  });

  void it('refuses a change of other resources, of the QoS class, and any resource change with the gate off', () => {
    const old = created(on, burstable);
    const storage = update(on, old, { ...burstable, requests: { ...burstable.requests, 'ephemeral-storage': '1Gi' } });
    assert.match(messages(storage.errors).join('\n'), /^spec: Forbidden: pod updates may not change fields other than/);
    const guaranteed = update(on, old, { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } });
    assert.deepEqual(messages(guaranteed.errors), ['metadata: Invalid value: "Burstable": Pod QoS is immutable']);
    const gateOff = update(off, created(off, burstable), { requests: { cpu: '150m', memory: '32Mi' }, limits: { cpu: '300m', memory: '64Mi' } });
    assert.match(messages(gateOff.errors).join('\n'), /^spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/);
  });

  void it('validates resizePolicy as upstream', () => {
    const check = (policies: Obj[], init = false): string[] => {
      const p = pod(burstable);
      const spec = p.spec as Obj;
      if (init) spec.initContainers = [{ name: 'i', image: 'x', resizePolicy: policies }];
      else ((spec.containers as Obj[])[0] as Obj).resizePolicy = policies;
      on.prepareForCreate?.(p, ctx);
      const errors = new FieldErrors();
      on.validateCreate(p, errors, ctx);
      return errors.list.map((e) => `${e.type} ${e.field}`);
    };
    assert.deepEqual(check([{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }]), []);
    assert.deepEqual(check([{ resourceName: 'storage', restartPolicy: 'NotRequired' }]), ['FieldValueNotSupported spec.containers[0].resizePolicy']);
    assert.deepEqual(check([{ resourceName: 'cpu', restartPolicy: 'Sometimes' }]), ['FieldValueNotSupported spec.containers[0].resizePolicy']);
    assert.deepEqual(check([{ resourceName: 'cpu', restartPolicy: 'NotRequired' }, { resourceName: 'cpu', restartPolicy: 'RestartContainer' }]), ['FieldValueDuplicate spec.containers[0].resizePolicy[1]']);
    assert.deepEqual(check([{ resourceName: 'cpu', restartPolicy: 'NotRequired' }], true), ['FieldValueInvalid spec.initContainers[0].resizePolicy']);
  });

  void it('drops status.resize and the resource fields of container statuses with the gate off', () => {
    const old = created(off, burstable);
    const next = structuredClone(old);
    next.status = { phase: 'Running', resize: 'InProgress', containerStatuses: [{ name: 'c', allocatedResources: { cpu: '1' }, resources: {} }] };
    off.prepareForUpdate?.(next, old, { ...ctx, subresource: 'status' });
    assert.deepEqual(next.status, { phase: 'Running', containerStatuses: [{ name: 'c' }] });
    const kept = structuredClone(next);
    kept.status = { phase: 'Running', resize: 'InProgress' };
    on.prepareForUpdate?.(kept, old, { ...ctx, subresource: 'status' });
    assert.equal((kept.status as Obj).resize, 'InProgress');
  });
});

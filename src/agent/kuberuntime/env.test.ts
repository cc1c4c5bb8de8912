import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import { isOrchError } from '../../api/errors.js';
import { expand, expandCommand, makeEnvironment, mappingFor, type EnvContext } from './env.js';
import type { NodePod } from '../../api/pod/index.js';

const vars = mappingFor(new Map([['VAR_A', 'A'], ['VAR_B', 'B'], ['VAR_C', 'C'], ['VAR_EMPTY', '']]));

function pod(container: Container, extra: Partial<NodePod> = {}): NodePod {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', labels: { app: 'web', tier: 'front' }, annotations: { note: 'a "quoted" one' } },
    spec: { nodeName: 'node-a', serviceAccountName: 'sa', containers: [container] },
    ...extra,
  };
}

function ctx(container: Container, p: NodePod = pod(container)): EnvContext {
  return { pod: p, container, podIPs: ['10.88.0.5', 'fd00::5'], hostIPs: ['192.168.1.10'], nodeName: 'fallback-node', capacity: { cpuMilli: 2000, memoryBytes: 4 * 1024 ** 3 } };
}

function env(container: Container, p?: NodePod): Record<string, string> {
  return Object.fromEntries(makeEnvironment(ctx(container, p)).map((e) => [e.name, e.value]));
}

void describe('expand', () => {
  // upstream's table of cases for third_party/forked/golang/expansion
  const cases: [string, string][] = [
    ['$(VAR_A)', 'A'],
    ['___$(VAR_B)___', '___B___'],
    ['$(VAR_A)-$(VAR_A)', 'A-A'],
    ['f000-$$VAR_A', 'f000-$VAR_A'],
    ['foo\\$(VAR_C)bar', 'foo\\Cbar'],
    ['foo\\\\$(VAR_C)bar', 'foo\\\\Cbar'],
    ['$(VAR_A)$(VAR_B)$(VAR_C)', 'ABC'],
    ['$$(VAR_B)_$(VAR_A)', '$(VAR_B)_A'],
    ['$$$(VAR_A)', '$A'],
    ['$$$$$$(VAR_A)', '$$$(VAR_A)'],
    ['$(VAR_DNE)', '$(VAR_DNE)'],
    ['$(VAR_EMPTY)', ''],
    ['$(VAR_A', '$(VAR_A'],
    ['$(', '$('],
    ['$', '$'],
    ['$VAR_A', '$VAR_A'],
    ['$$$', '$$'],
    ['$()', '$()'],
    ['x$(VAR_A)$', 'xA$'],
    ['$(VAR_A)(VAR_A)', 'A(VAR_A)'],
    ['héllo $(VAR_B) ✓', 'héllo B ✓'],
  ];
  for (const [input, want] of cases) {
    void it(`${JSON.stringify(input)} → ${JSON.stringify(want)}`, () => {
      assert.equal(expand(input, vars), want);
    });
  }
});

void describe('makeEnvironment', () => {
  void it('expands values against earlier variables only, keeps unknown references, overrides duplicates in place', () => {
    const c: Container = {
      name: 'app',
      env: [
        { name: 'A', value: 'a' },
        { name: 'B', value: '$(A)-$(C)' },
        { name: 'C', value: 'c' },
        { name: 'A', value: 'again-$(A)' },
        { name: 'ESC', value: '$$(A)' },
        { name: 'EMPTY' },
      ],
    };
    const list = makeEnvironment(ctx(c));
    assert.deepEqual(list.map((e) => e.name), ['A', 'B', 'C', 'ESC', 'EMPTY']);
    assert.deepEqual(Object.fromEntries(list.map((e) => [e.name, e.value])), { A: 'again-a', B: 'a-$(C)', C: 'c', ESC: '$(A)', EMPTY: '' });
  });

  void it('reads the downward API fields', () => {
    const ref = (fieldPath: string) => ({ valueFrom: { fieldRef: { fieldPath } } });
    const c: Container = {
      name: 'app',
      env: [
        { name: 'NAME', ...ref('metadata.name') },
        { name: 'NS', ...ref('metadata.namespace') },
        { name: 'UID', ...ref('metadata.uid') },
        { name: 'APP', ...ref("metadata.labels['app']") },
        { name: 'MISSING', ...ref("metadata.labels['nope']") },
        { name: 'NOTE', ...ref("metadata.annotations['note']") },
        { name: 'LABELS', ...ref('metadata.labels') },
        { name: 'NODE', ...ref('spec.nodeName') },
        { name: 'SA', ...ref('spec.serviceAccountName') },
        { name: 'POD_IP', ...ref('status.podIP') },
        { name: 'POD_IPS', ...ref('status.podIPs') },
        { name: 'HOST_IP', ...ref('status.hostIP') },
        { name: 'HOST_IPS', ...ref('status.hostIPs') },
        { name: 'MSG', value: '$(NAME) in $(NS) at $(POD_IP)' },
      ],
    };
    assert.deepEqual(env(c), {
      NAME: 'web', NS: 'shop', UID: 'u-1', APP: 'web', MISSING: '', NOTE: 'a "quoted" one',
      LABELS: 'app="web"\ntier="front"', NODE: 'node-a', SA: 'sa', POD_IP: '10.88.0.5', POD_IPS: '10.88.0.5,fd00::5',
      HOST_IP: '192.168.1.10', HOST_IPS: '192.168.1.10', MSG: 'web in shop at 10.88.0.5',
    });
  });

  void it('uses the agent node name for a pod without spec.nodeName', () => {
    const c: Container = { name: 'app', env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] };
    const p = pod(c);
    assert.equal(env(c, { ...p, spec: { containers: [c] } }).NODE, 'fallback-node');
  });

  void it('reads resourceFieldRefs with divisors, rounding up, and node capacity for unset limits', () => {
    const res = (resource: string, divisor?: string, containerName?: string) => ({
      valueFrom: { resourceFieldRef: { resource, ...(divisor === undefined ? {} : { divisor }), ...(containerName === undefined ? {} : { containerName }) } },
    });
    const c: Container = {
      name: 'app',
      resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1500m', memory: '64Mi' } },
      env: [
        { name: 'CPU_LIMIT', ...res('limits.cpu') },
        { name: 'CPU_LIMIT_M', ...res('limits.cpu', '1m') },
        { name: 'CPU_REQUEST', ...res('requests.cpu') },
        { name: 'CPU_REQUEST_M', ...res('requests.cpu', '1m') },
        { name: 'MEM_LIMIT', ...res('limits.memory') },
        { name: 'MEM_LIMIT_MI', ...res('limits.memory', '1Mi') },
        { name: 'MEM_REQUEST_K', ...res('requests.memory', '1k') },
        { name: 'OTHER_CPU', ...res('limits.cpu', undefined, 'side') },
      ],
    };
    const side: Container = { name: 'side' };
    const p = pod(c);
    p.spec = { containers: [c, side] };
    assert.deepEqual(env(c, p), {
      CPU_LIMIT: '2', CPU_LIMIT_M: '1500', CPU_REQUEST: '1', CPU_REQUEST_M: '250', MEM_LIMIT: String(64 * 1024 * 1024),
      MEM_LIMIT_MI: '64', MEM_REQUEST_K: '33555', OTHER_CPU: '2',
    });
  });

  void it('fails on configMap and secret sources, and unknown field paths or resources', () => {
    const bad: Container[] = [
      { name: 'a', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] },
      { name: 'b', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
      { name: 'c', envFrom: [{ configMapRef: { name: 'cm' } }] },
      { name: 'd', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.nope' } } }] },
      { name: 'e', env: [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }] },
    ];
    for (const c of bad) {
      assert.throws(() => makeEnvironment(ctx(c)), (err: unknown) => isOrchError(err) && err.code === 'KUBERUNTIME_ENV_INVALID');
    }
    assert.throws(() => makeEnvironment(ctx(bad[0]!)), /needs the API server/);
  });
});

void describe('expandCommand', () => {
  void it('expands command and args against the whole environment', () => {
    const c: Container = { name: 'app', command: ['echo', '$(A)'], args: ['$(B)', '$$(A)', '$(NOPE)'] };
    assert.deepEqual(expandCommand(c, [{ name: 'A', value: 'x' }, { name: 'B', value: 'y' }]), { command: ['echo', 'x'], args: ['y', '$(A)', '$(NOPE)'] });
    assert.deepEqual(expandCommand({ name: 'n' }, []), { command: [], args: [] });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Buffer } from 'node:buffer';
import type { ConfigMap, Container, Secret } from 'kubernetes-types/core/v1.js';
import { isOrchError } from '../../api/errors.js';
import { expand, expandCommand, makeEnvironment, mappingFor, type EnvContext } from './env.js';
import { invalidEnvFromKeys, readEnvObjects, type EnvObjectSource, type EnvObjects } from './env-sources.js';
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
      HOST_IP: '192.168.1.10', HOST_IPS: '', MSG: 'web in shop at 10.88.0.5',
    });
    // status.hostIPs resolves only with the PodHostIPs gate (upstream v1.28: "" without it).
    assert.equal(makeEnvironment({ ...ctx(c), podHostIPs: true }).find((e) => e.name === 'HOST_IPS')?.value, '192.168.1.10');
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

  void it('fails on unknown field paths or resources', () => {
    const bad: Container[] = [
      { name: 'd', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.nope' } } }] },
      { name: 'e', env: [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }] },
    ];
    for (const c of bad) {
      assert.throws(() => makeEnvironment(ctx(c)), (err: unknown) => isOrchError(err) && err.code === 'KUBERUNTIME_ENV_INVALID');
    }
  });
});

void describe('makeEnvironment with ConfigMaps and Secrets', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  const objects: EnvObjects = {
    configMaps: new Map<string, ConfigMap | undefined>([
      ['cfg', { metadata: { name: 'cfg' }, data: { mode: 'fast', level: '3', 'bad key': 'x', '1st': 'y' } }],
      ['gone', undefined],
    ]),
    secrets: new Map<string, Secret | undefined>([['creds', { metadata: { name: 'creds' }, data: { password: b64('s3cret'), user: b64('bob') } }]]),
  };
  const withObjects = (c: Container): Record<string, string> => Object.fromEntries(makeEnvironment({ ...ctx(c), objects }).map((e) => [e.name, e.value]));

  void it('reads keys of ConfigMaps and Secrets (decoded) and expands references to them', () => {
    const c: Container = {
      name: 'app',
      env: [
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
        { name: 'PASS', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
        { name: 'URL', value: 'db://$(USER_NAME):$(PASS)@$(MODE)' },
        { name: 'USER_NAME', valueFrom: { secretKeyRef: { name: 'creds', key: 'user' } } },
      ],
    };
    assert.deepEqual(withObjects(c), { MODE: 'fast', PASS: 's3cret', URL: 'db://$(USER_NAME):s3cret@fast', USER_NAME: 'bob' });
  });

  void it('leaves out optional references to a missing object or key', () => {
    const c: Container = {
      name: 'app',
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } },
        { name: 'B', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k', optional: true } } },
        { name: 'C', valueFrom: { secretKeyRef: { name: 'creds', key: 'nope', optional: true } } },
        { name: 'D', value: 'd' },
      ],
      envFrom: [{ configMapRef: { name: 'gone', optional: true } }],
    };
    assert.deepEqual(withObjects(c), { D: 'd' });
  });

  void it('names the missing object or key when the reference is not optional', () => {
    const cases: [Container, RegExp][] = [
      [{ name: 'a', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope' } } }] }, /env X: couldn't find key nope in ConfigMap shop\/cfg/],
      [{ name: 'b', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k' } } }] }, /env X: configmap shop\/gone not found/],
      [{ name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'nope' } } }] }, /couldn't find key nope in Secret shop\/creds/],
      [{ name: 'd', envFrom: [{ configMapRef: { name: 'gone' } }] }, /envFrom: configmap shop\/gone not found/],
    ];
    for (const [c, message] of cases) {
      assert.throws(() => makeEnvironment({ ...ctx(c), objects }), (err: unknown) => isOrchError(err) && err.code === 'KUBERUNTIME_ENV_REFERENCE_NOT_FOUND' && message.test(err.message));
    }
  });

  void it('takes envFrom keys first with their prefix, skips invalid names, and lets env override them', () => {
    const c: Container = {
      name: 'app',
      envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'CFG_' }, { secretRef: { name: 'creds' } }, { configMapRef: { name: 'cfg' } }],
      env: [{ name: 'user', value: 'override-$(CFG_mode)' }],
    };
    const list = makeEnvironment({ ...ctx(c), objects });
    assert.deepEqual(list.map((e) => e.name), ['CFG_1st', 'CFG_level', 'CFG_mode', 'password', 'user', 'level', 'mode']);
    assert.deepEqual(Object.fromEntries(list.map((e) => [e.name, e.value])), {
      CFG_1st: 'y', CFG_level: '3', CFG_mode: 'fast', password: 's3cret', user: 'override-fast', level: '3', mode: 'fast',
    });
    assert.deepEqual(invalidEnvFromKeys(pod(c), c, objects), [
      'Keys [CFG_bad key] from the EnvFrom configMap shop/cfg were skipped since they are considered invalid environment variable names.',
      'Keys [1st, bad key] from the EnvFrom configMap shop/cfg were skipped since they are considered invalid environment variable names.',
    ]);
  });
});

void describe('readEnvObjects', () => {
  const c: Container = { name: 'app', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }], envFrom: [{ secretRef: { name: 's' } }, { configMapRef: { name: 'cfg' } }] };

  void it('reads each named object once, and nothing for a container that names none', async () => {
    const asked: string[] = [];
    const source: EnvObjectSource = {
      configMap: (ns, name) => { asked.push(`cm ${ns}/${name}`); return Promise.resolve({ metadata: { name } }); },
      secret: (ns, name) => { asked.push(`secret ${ns}/${name}`); return Promise.resolve(undefined); },
    };
    const read = await readEnvObjects(source, pod(c), c);
    assert.deepEqual(asked.sort(), ['cm shop/cfg', 'secret shop/s']);
    assert.equal(read.configMaps.get('cfg')?.metadata?.name, 'cfg');
    assert.ok(read.secrets.has('s') && read.secrets.get('s') === undefined);
    assert.equal((await readEnvObjects(source, pod({ name: 'x' }), { name: 'x', env: [{ name: 'A', value: 'a' }] })).configMaps.size, 0);
    assert.equal(asked.length, 2);
  });

  void it('fails without a source naming the pod, the container and the reference', async () => {
    await assert.rejects(readEnvObjects(undefined, pod(c), c), (err: unknown) => isOrchError(err) && err.code === 'KUBERUNTIME_ENV_SOURCE_UNAVAILABLE'
      && err.message.includes('container "app" of pod shop/web: env X: configMapKeyRef "cfg" (key "k") names a ConfigMap of the API server')
      && !err.message.includes('does not read yet'));
  });

  void it('fails naming the object when a read fails', async () => {
    const source: EnvObjectSource = { configMap: () => Promise.reject(new Error('boom')), secret: () => Promise.resolve(undefined) };
    await assert.rejects(readEnvObjects(source, pod(c), c), /cannot read ConfigMap shop\/cfg .*: boom/);
  });
});

void describe('expandCommand', () => {
  void it('expands command and args against the whole environment', () => {
    const c: Container = { name: 'app', command: ['echo', '$(A)'], args: ['$(B)', '$$(A)', '$(NOPE)'] };
    assert.deepEqual(expandCommand(c, [{ name: 'A', value: 'x' }, { name: 'B', value: 'y' }]), { command: ['echo', 'x'], args: ['y', '$(A)', '$(NOPE)'] });
    assert.deepEqual(expandCommand({ name: 'n' }, []), { command: [], args: [] });
  });
});

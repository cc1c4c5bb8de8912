import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults, defaultImagePullPolicy, imageTagAndDigest } from './defaults.js';

function pod(containers: Container[], extra: Partial<Pod['spec']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers, ...extra } };
}

void describe('applyPodDefaults', () => {
  void it('fills the pod-level defaults', () => {
    const spec = applyPodDefaults(pod([{ name: 'c', image: 'busybox:1.36' }])).spec!;
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.dnsPolicy, 'ClusterFirst');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.equal(spec.schedulerName, 'default-scheduler');
    assert.deepEqual(spec.securityContext, {});
    assert.equal(spec.enableServiceLinks, true);
  });

  void it('keeps values that are set', () => {
    const spec = applyPodDefaults(
      pod([{ name: 'c', image: 'x' }], { restartPolicy: 'Never', dnsPolicy: 'Default', terminationGracePeriodSeconds: 0, enableServiceLinks: false }),
    ).spec!;
    assert.equal(spec.restartPolicy, 'Never');
    assert.equal(spec.dnsPolicy, 'Default');
    assert.equal(spec.terminationGracePeriodSeconds, 0);
    assert.equal(spec.enableServiceLinks, false);
  });

  void it('fills the container defaults, for containers and init containers', () => {
    const spec = applyPodDefaults(
      pod([{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }] }], { initContainers: [{ name: 'i', image: 'busybox:1.36' }] }),
    ).spec!;
    const c = spec.containers[0]!;
    assert.equal(c.imagePullPolicy, 'Always');
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.terminationMessagePolicy, 'File');
    assert.equal(c.ports![0]!.protocol, 'TCP');
    assert.equal(c.ports![0]!.hostPort, undefined);
    assert.equal(spec.initContainers![0]!.imagePullPolicy, 'IfNotPresent');
    assert.equal(spec.initContainers![0]!.terminationMessagePolicy, 'File');
  });

  void it('defaults host ports to container ports with the host network', () => {
    const spec = applyPodDefaults(pod([{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }, { containerPort: 81, hostPort: 81 }] }], { hostNetwork: true })).spec!;
    assert.deepEqual(spec.containers[0]!.ports!.map((p) => p.hostPort), [8080, 81]);
  });

  void it('fills probe timings and HTTP probe path and scheme; keeps set values', () => {
    const c = applyPodDefaults(
      pod([
        {
          name: 'c',
          image: 'x',
          livenessProbe: { httpGet: { port: 8080 } },
          readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 3, timeoutSeconds: 0 },
          startupProbe: { grpc: { port: 9000 } },
          lifecycle: { preStop: { httpGet: { port: 80, path: '/stop' } } },
        },
      ]),
    ).spec!.containers[0]!;
    assert.deepEqual(c.livenessProbe, {
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.equal(c.readinessProbe!.periodSeconds, 3);
    assert.equal(c.readinessProbe!.timeoutSeconds, 1);
    assert.equal(c.startupProbe!.grpc!.service, '');
    assert.deepEqual(c.lifecycle!.preStop!.httpGet, { port: 80, path: '/stop', scheme: 'HTTP' });
  });

  void it('gives env fieldRefs the version v1', () => {
    const c = applyPodDefaults(
      pod([{ name: 'c', image: 'x', env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'V', value: 'v' }] }]),
    ).spec!.containers[0]!;
    assert.equal(c.env![0]!.valueFrom!.fieldRef!.apiVersion, 'v1');
    assert.deepEqual(c.env![1], { name: 'V', value: 'v' });
  });

  void it('copies limits into missing requests', () => {
    const c = applyPodDefaults(
      pod([{ name: 'c', image: 'x', resources: { limits: { cpu: '1', memory: '64Mi' }, requests: { cpu: '500m' } } }]),
    ).spec!.containers[0]!;
    assert.deepEqual(c.resources!.requests, { cpu: '500m', memory: '64Mi' });
    const bare = applyPodDefaults(pod([{ name: 'c', image: 'x', resources: {} }])).spec!.containers[0]!;
    assert.deepEqual(bare.resources, {});
  });

  void it('fills volume defaults', () => {
    const volumes = applyPodDefaults(
      pod([{ name: 'c', image: 'x' }], {
        volumes: [
          { name: 'a' },
          { name: 'b', hostPath: { path: '/data' } },
          { name: 'c', emptyDir: { medium: '' } },
          { name: 'd', secret: { secretName: 's' } },
          { name: 'e', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
        ],
      }),
    ).spec!.volumes!;
    assert.deepEqual(volumes[0], { name: 'a', emptyDir: {} });
    assert.deepEqual(volumes[1], { name: 'b', hostPath: { path: '/data', type: '' } });
    assert.deepEqual(volumes[2], { name: 'c', emptyDir: { medium: '' } });
    assert.equal(volumes[3]!.secret!.defaultMode, 0o644);
    assert.equal(volumes[4]!.downwardAPI!.items![0]!.fieldRef!.apiVersion, 'v1');
  });

  void it('leaves its argument and the status alone, and is idempotent', () => {
    const input: Pod = { ...pod([{ name: 'c', image: 'x' }]), status: { phase: 'Running' } };
    const before = structuredClone(input);
    const once = applyPodDefaults(input);
    assert.deepEqual(input, before);
    assert.deepEqual(once.status, { phase: 'Running' });
    assert.deepEqual(applyPodDefaults(once), once);
  });

  void it('gives a pod without a spec an empty container list', () => {
    const out = applyPodDefaults({ metadata: { name: 'p' } });
    assert.deepEqual(out.spec!.containers, []);
  });
});

void describe('image pull policy', () => {
  const cases: [string, 'Always' | 'IfNotPresent'][] = [
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['busybox:1.36', 'IfNotPresent'],
    ['localhost:5000/busybox', 'Always'],
    ['localhost:5000/busybox:v1', 'IfNotPresent'],
    ['busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
    ['busybox:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'Always'],
    ['', 'IfNotPresent'],
  ];
  for (const [image, policy] of cases) {
    void it(`${JSON.stringify(image)} gives ${policy}`, () => {
      assert.equal(defaultImagePullPolicy(image), policy);
    });
  }

  void it('splits the tag and the digest', () => {
    assert.deepEqual(imageTagAndDigest('reg:5000/a/b:t@sha256:x'), { tag: 't', digest: 'sha256:x' });
    assert.deepEqual(imageTagAndDigest('reg:5000/a/b'), { tag: '', digest: '' });
  });

  void it('keeps a pull policy that is set', () => {
    const c = applyPodDefaults(pod([{ name: 'c', image: 'busybox', imagePullPolicy: 'Never' }])).spec!.containers[0]!;
    assert.equal(c.imagePullPolicy, 'Never');
  });
});

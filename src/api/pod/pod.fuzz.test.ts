/**
 * Fuzz suite: generated pod specs (plausible and implausible values in every field the agent
 * reads) through decoding, defaults and validation. Never a throw; every problem starts with
 * the path of its field; defaults are idempotent and leave their argument unchanged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fc, fuzz } from '../testing-fuzz.js';
import { applyPodDefaults, decodePod, validatePod } from './index.js';

const name = fc.oneof(fc.constantFrom('web', 'a', 'my-app', 'x'.repeat(64), 'UP', 'a_b', '-a', '', 'a.b'), fc.string({ maxLength: 20 }));
const quantity = fc.oneof(fc.constantFrom('100m', '1', '64Mi', '1Gi', '-1', '0', '1e3', '1.5', 'abc', '', '1Ki', '9999999999999999999999'), fc.string({ maxLength: 8 }));
const port = fc.oneof(fc.integer({ min: -5, max: 70_000 }), fc.constantFrom('http', 'HTTP', '', 'a-very-long-port-name'));
const probe = fc.option(fc.record({
  httpGet: fc.option(fc.record({ path: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }), port, scheme: fc.option(fc.constantFrom('HTTP', 'HTTPS', 'FTP'), { nil: undefined }) }), { nil: undefined }),
  tcpSocket: fc.option(fc.record({ port }), { nil: undefined }),
  exec: fc.option(fc.record({ command: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }) }), { nil: undefined }),
  periodSeconds: fc.option(fc.integer({ min: -2, max: 100 }), { nil: undefined }),
  failureThreshold: fc.option(fc.integer({ min: -2, max: 10 }), { nil: undefined }),
}, { requiredKeys: [] }), { nil: undefined });
const container = fc.record({
  name,
  image: fc.oneof(fc.constantFrom('busybox:1.35', 'busybox', 'reg:5000/a/b@sha256:' + 'a'.repeat(64), '', ' ', 'UPPER:x'), fc.string({ maxLength: 12 })),
  imagePullPolicy: fc.option(fc.constantFrom('Always', 'IfNotPresent', 'Never', 'Sometimes'), { nil: undefined }),
  command: fc.option(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }), { nil: undefined }),
  env: fc.option(fc.array(fc.record({ name, value: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }) }), { maxLength: 3 }), { nil: undefined }),
  ports: fc.option(fc.array(fc.record({ containerPort: fc.integer({ min: -5, max: 70_000 }), hostPort: fc.option(fc.integer({ min: -5, max: 70_000 }), { nil: undefined }), protocol: fc.option(fc.constantFrom('TCP', 'UDP', 'SCTP', 'ICMP'), { nil: undefined }), name: fc.option(name, { nil: undefined }) }), { maxLength: 3 }), { nil: undefined }),
  resources: fc.option(fc.record({ requests: fc.dictionary(fc.constantFrom('cpu', 'memory', 'ephemeral-storage', 'hugepages-2Mi', 'x/y', 'bad key'), quantity), limits: fc.dictionary(fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu'), quantity) }, { requiredKeys: [] }), { nil: undefined }),
  readinessProbe: probe,
  livenessProbe: probe,
  restartPolicy: fc.option(fc.constantFrom('Always', 'Never'), { nil: undefined }),
  volumeMounts: fc.option(fc.array(fc.record({ name, mountPath: fc.constantFrom('/data', '', 'relative', '/a:b', '/'), subPath: fc.option(fc.constantFrom('x', '../x', '/abs'), { nil: undefined }) }), { maxLength: 2 }), { nil: undefined }),
}, { requiredKeys: ['name', 'image'] });
const volume = fc.oneof(
  fc.record({ name, emptyDir: fc.record({ medium: fc.option(fc.constantFrom('', 'Memory', 'Disk'), { nil: undefined }), sizeLimit: fc.option(quantity, { nil: undefined }) }, { requiredKeys: [] }) }),
  fc.record({ name, hostPath: fc.record({ path: fc.constantFrom('/tmp', '', 'rel', '/a/../b'), type: fc.option(fc.constantFrom('', 'Directory', 'File', 'Nope'), { nil: undefined }) }, { requiredKeys: ['path'] }) }),
  fc.record({ name, configMap: fc.record({ name, items: fc.option(fc.array(fc.record({ key: name, path: fc.constantFrom('a', '../a', '/a', '') })), { nil: undefined }) }, { requiredKeys: ['name'] }) }),
);
const pod = fc.record({
  apiVersion: fc.constant('v1'), kind: fc.constant('Pod'),
  metadata: fc.record({ name, namespace: fc.option(name, { nil: undefined }), labels: fc.option(fc.dictionary(fc.oneof(name, fc.constantFrom('orch.io/x', 'a/b/c')), fc.string({ maxLength: 10 })), { nil: undefined }) }, { requiredKeys: ['name'] }),
  spec: fc.record({
    containers: fc.array(container, { maxLength: 4 }),
    initContainers: fc.option(fc.array(container, { maxLength: 2 }), { nil: undefined }),
    volumes: fc.option(fc.array(volume, { maxLength: 3 }), { nil: undefined }),
    restartPolicy: fc.option(fc.constantFrom('Always', 'OnFailure', 'Never', 'Sometimes', ''), { nil: undefined }),
    dnsPolicy: fc.option(fc.constantFrom('ClusterFirst', 'Default', 'None', 'ClusterFirstWithHostNet', 'Other'), { nil: undefined }),
    hostNetwork: fc.option(fc.boolean(), { nil: undefined }),
    terminationGracePeriodSeconds: fc.option(fc.integer({ min: -10, max: 100_000 }), { nil: undefined }),
    activeDeadlineSeconds: fc.option(fc.integer({ min: -10, max: 100_000 }), { nil: undefined }),
    nodeSelector: fc.option(fc.dictionary(name, fc.string({ maxLength: 6 })), { nil: undefined }),
    tolerations: fc.option(fc.array(fc.record({ key: fc.option(name, { nil: undefined }), operator: fc.option(fc.constantFrom('Exists', 'Equal', 'In'), { nil: undefined }), effect: fc.option(fc.constantFrom('NoSchedule', 'NoExecute', 'Bad'), { nil: undefined }), tolerationSeconds: fc.option(fc.integer({ min: -5, max: 100 }), { nil: undefined }) }, { requiredKeys: [] }), { maxLength: 2 }), { nil: undefined }),
  }, { requiredKeys: ['containers'] }),
});

/** Every problem starts with the path of its field (`spec.containers[0].name: ...`). */
const FIELD_PATH = /^(metadata|spec|status|apiVersion|kind)[.[:]/;

void describe('fuzz: pod specs', () => {
  void it('decode, default and validate without a throw; every problem names its field; defaults are idempotent', () => {
    fuzz('pod specs (validation and defaults)', pod, (generated) => {
      const before = JSON.stringify(generated);
      const decoded = decodePod(JSON.parse(before));
      if (!decoded.ok) {
        for (const p of decoded.problems) assert.match(p, FIELD_PATH);
        return;
      }
      const defaulted = applyPodDefaults(decoded.pod);
      assert.deepEqual(applyPodDefaults(defaulted), defaulted, 'defaults applied twice change nothing more');
      const problems = validatePod(defaulted);
      for (const p of problems) {
        assert.match(p, FIELD_PATH);
        assert.ok(p.length < 1000, p.slice(0, 300));
      }
      assert.equal(JSON.stringify(generated), before, 'the generated pod was not changed');
    }, 1500);
  });
});

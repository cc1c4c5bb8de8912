/**
 * Fuzz suite: mutated manifests (text edits of valid ones, values replaced anywhere, deep or
 * huge input) through the decoder, then the static pod preparation (defaults and validation).
 * Never a throw; a rejected manifest's every problem names the file, then a field (or the line
 * and column, or the whole document), and repeats a bounded amount of the input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import { fc, fuzz, mutatedObject, mutatedText } from '../../api/testing-fuzz.js';
import { decodeManifest } from './manifest.js';
import { prepareStaticPod } from './static.js';

const ORIGIN = '/etc/orch/manifests/fuzz.yaml';

const VALID_POD = {
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' }, annotations: { note: 'x' } },
  spec: {
    restartPolicy: 'Always', hostNetwork: false, terminationGracePeriodSeconds: 5,
    initContainers: [{ name: 'init', image: 'busybox:1.35', command: ['sh', '-c', 'true'] }],
    containers: [{
      name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'], env: [{ name: 'A', value: '1' }],
      ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP', name: 'http' }],
      resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
      readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 5 },
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    }],
    volumes: [{ name: 'data', emptyDir: {} }, { name: 'host', hostPath: { path: '/tmp', type: 'Directory' } }],
    tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
  },
};

const SAMPLES = [
  JSON.stringify(VALID_POD),
  JSON.stringify(VALID_POD, null, 2),
  'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: busybox:1.35\n    args: [a, "b", "0644", "yes"]\n',
];

/** Values that go wrong in interesting ways: wrong types, huge, deep, odd strings. */
const WRONG_VALUE: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.constantFrom('', ' ', 'Always', '-1', '1e400', 'a'.repeat(300), '..', '/', 'UPPER', 'a_b', '0x10'),
  fc.integer(), fc.double(), fc.constant(null),
  fc.nat({ max: 3000 }).map((n) => 'x'.repeat(n * 100)),
  fc.nat({ max: 200 }).map((n) => JSON.parse(`${'['.repeat(n + 1)}${']'.repeat(n + 1)}`) as unknown),
);

/** What a problem line may start with after the file: a field path, a line:column, or the whole document. */
const NAMES_WHERE = /^(line \d+:\d+|[a-zA-Z][\w-]*[.[:]|is \d|nesting too deep|holds |must be an object|cannot read the document|and \d+ more)/;

function checkRejection(problems: readonly string[]): void {
  assert.ok(problems.length > 0);
  for (const p of problems) {
    assert.ok(p.startsWith(`${ORIGIN}: `), `the file is named: ${p.slice(0, 300)}`);
    const rest = p.slice(ORIGIN.length + 2);
    assert.match(rest, NAMES_WHERE, `the field or place is named: ${rest.slice(0, 300)}`);
    assert.ok(p.length <= 2000, `a problem of ${p.length} characters: ${p.slice(0, 300)}`);
  }
}

function throughTheSource(text: string): void {
  const decoded = decodeManifest(text, { origin: ORIGIN, allowList: false });
  if (!decoded.ok) {
    checkRejection(decoded.problems);
    return;
  }
  for (const pod of decoded.pods) {
    const prepared = prepareStaticPod(pod, { nodeName: 'node1', origin: { kind: 'file', path: ORIGIN }, clock: new FakeClock() });
    if (!prepared.ok) checkRejection(prepared.problems.map((p) => `${ORIGIN}: ${p}`));
  }
}

void describe('fuzz: manifests', () => {
  void it('mutated manifest texts never crash the decoder, and each problem names the file and the place', () => {
    fuzz('manifests (text edits)', mutatedText(SAMPLES), throughTheSource, 1000);
  });

  void it('manifests with values replaced anywhere are decoded or rejected field by field', () => {
    fuzz('manifests (values replaced)', mutatedObject(VALID_POD, WRONG_VALUE), (value) => {
      const text: unknown = JSON.stringify(value);
      throughTheSource(typeof text === 'string' ? text : 'null');
    }, 1000);
  });

  void it('the valid samples stay valid', () => {
    for (const text of SAMPLES) {
      const decoded = decodeManifest(text, { origin: ORIGIN, allowList: false });
      assert.ok(decoded.ok, decoded.ok ? '' : decoded.problems.join('\n'));
    }
  });
});

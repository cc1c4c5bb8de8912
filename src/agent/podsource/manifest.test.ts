import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { podYAML } from './fixtures.js';
import { decodeManifest, type ManifestResult } from './manifest.js';

const FILE = { origin: '/etc/orch/manifests/web.yaml', allowList: false };
const URL_ORIGIN = { origin: 'http://127.0.0.1:1/pods', allowList: true };

function problems(result: ManifestResult): readonly string[] {
  assert.ok(!result.ok, 'expected problems');
  return result.problems;
}

void describe('decodeManifest', () => {
  void it('reads a single pod in YAML', () => {
    const result = decodeManifest(podYAML('web'), FILE);
    assert.ok(result.ok);
    assert.equal(result.pods.length, 1);
    assert.equal(result.pods[0]!.metadata!.name, 'web');
    assert.equal(result.pods[0]!.spec!.containers[0]!.image, 'busybox:1.36');
  });

  void it('reads a single pod in JSON', () => {
    const json = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    const result = decodeManifest(json, FILE);
    assert.ok(result.ok);
    assert.equal(result.pods[0]!.metadata!.name, 'web');
  });

  void it('reads YAML 1.1 as upstream: octal modes, timestamps as text', () => {
    const text = `${podYAML('web')}  volumes:\n  - name: s\n    secret:\n      secretName: s\n      defaultMode: 0644\n`;
    const result = decodeManifest(text.replace('metadata:\n', 'metadata:\n  creationTimestamp: 2024-01-01T00:00:00Z\n'), FILE);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.pods[0]!.spec!.volumes![0]!.secret!.defaultMode, 0o644);
    assert.equal(result.pods[0]!.metadata!.creationTimestamp, '2024-01-01T00:00:00Z');
  });

  void it('accepts a leading document marker and a trailing empty document', () => {
    assert.ok(decodeManifest(`---\n${podYAML('web')}---\n`, FILE).ok);
  });

  void it('reports malformed YAML with the origin, line and column', () => {
    const lines = problems(decodeManifest('apiVersion: v1\nkind: Pod\nmetadata:\n  name: [web\n', FILE));
    assert.ok(lines.length > 0);
    assert.match(lines[0]!, /^\/etc\/orch\/manifests\/web\.yaml: line \d+:\d+: /);
  });

  void it('reports a duplicate key', () => {
    const lines = problems(decodeManifest('apiVersion: v1\nkind: Pod\nkind: Pod\n', FILE));
    assert.match(lines[0]!, /web\.yaml: line 3:1: .*unique/i);
  });

  void it('rejects an empty text and a text of comments', () => {
    assert.deepEqual(problems(decodeManifest('', FILE)), ['/etc/orch/manifests/web.yaml: holds no object (the document is empty)']);
    assert.deepEqual(problems(decodeManifest('# nothing\n', FILE)), ['/etc/orch/manifests/web.yaml: holds no object (the document is empty)']);
  });

  void it('rejects two documents', () => {
    assert.match(problems(decodeManifest(`${podYAML('a')}---\n${podYAML('b')}`, FILE))[0]!, /holds 2 documents/);
  });

  void it('rejects other kinds, a missing kind, another version, and scalars', () => {
    assert.match(problems(decodeManifest('apiVersion: apps/v1\nkind: Deployment\n', FILE))[0]!, /kind: the string "Deployment" is not supported \(expected Pod\)/);
    assert.match(problems(decodeManifest('apiVersion: v1\nmetadata: {}\n', FILE))[0]!, /kind: is missing/);
    assert.match(problems(decodeManifest('apiVersion: v2\nkind: Pod\n', FILE))[0]!, /apiVersion: must be v1/);
    assert.match(problems(decodeManifest('just text\n', FILE))[0]!, /must be an object of kind Pod, not the string "just text"/);
  });

  void it('rejects a list from a file', () => {
    assert.match(problems(decodeManifest('apiVersion: v1\nkind: PodList\nitems: []\n', FILE))[0]!, /"PodList" is not supported \(expected Pod\)/);
  });

  void it('reads a PodList (items need no kind) and a List (items need one) from a URL', () => {
    const podList = { apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'a' }, spec: { containers: [] } }, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b' } }] };
    const a = decodeManifest(JSON.stringify(podList), URL_ORIGIN);
    assert.ok(a.ok);
    assert.deepEqual(a.pods.map((p) => [p.kind, p.metadata!.name]), [['Pod', 'a'], ['Pod', 'b']]);
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c' } }] };
    const b = decodeManifest(JSON.stringify(list), URL_ORIGIN);
    assert.ok(b.ok);
    assert.equal(b.pods[0]!.metadata!.name, 'c');
  });

  void it('rejects list items of another kind, and a list without items list', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [{ metadata: { name: 'c' } }, { apiVersion: 'v1', kind: 'Service' }] };
    assert.deepEqual(problems(decodeManifest(JSON.stringify(list), URL_ORIGIN)), [
      "http://127.0.0.1:1/pods: items[0].kind: is missing (a List names each item's kind: Pod)",
      'http://127.0.0.1:1/pods: items[0].apiVersion: is missing',
      `http://127.0.0.1:1/pods: items[1].kind: must be Pod, not the string "Service" (a List names each item's kind: Pod)`,
    ]);
    assert.match(problems(decodeManifest('apiVersion: v1\nkind: PodList\nitems: 3\n', URL_ORIGIN))[0]!, /items: must be a list/);
  });

  void it('reports fields of the wrong type with their path', () => {
    const text = podYAML('web').replace('    image: busybox:1.36\n', '    image: busybox:1.36\n    ports:\n    - containerPort: http\n');
    assert.deepEqual(problems(decodeManifest(text, FILE)), [
      '/etc/orch/manifests/web.yaml: spec.containers[0].ports[0].containerPort: must be an integer, not the string "http"',
    ]);
  });
});

void describe('decodeManifest on hostile input', () => {
  const pod = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'x' }] } });

  void it('refuses a text past the size limit, naming the file and the limit', () => {
    const text = `${pod('web')}\n#${'x'.repeat(5 * 1024 * 1024)}`;
    const found = problems(decodeManifest(text, FILE));
    assert.deepEqual(found, [`${FILE.origin}: is 5 MiB, larger than the limit of 4 MiB`]);
  });

  void it('says where nesting is too deep instead of overflowing the stack (flow, block and JSON)', () => {
    for (const text of ['['.repeat(10_000) + ']'.repeat(10_000), `${'- '.repeat(10_000)}x`, `a: ${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`]) {
      const found = problems(decodeManifest(text, FILE));
      assert.equal(found.length, 1);
      assert.match(found[0]!, /^\/etc\/orch\/manifests\/web\.yaml: nesting too deep at line 1:\d+ \(more than 100 levels\)$/);
    }
  });

  void it('refuses a text of a million small values before building them', () => {
    const text = `[${Array.from({ length: 1_000_000 }, () => '1').join(',')}]`;
    assert.match(problems(decodeManifest(text, FILE))[0]!, /holds more than 250000 values \(at line 1:\d+\)$/);
  });

  void it('refuses an alias bomb', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    assert.match(problems(decodeManifest(lines.join('\n'), FILE))[0]!, /holds more than 100 aliases/);
    const few = ['a0: &a0 [x, x]', 'a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]', 'a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]'];
    assert.match(problems(decodeManifest(few.join('\n'), FILE))[0]!, /alias/i);
  });

  void it('quotes at most 200 characters of a bad value', () => {
    const name = 'X'.repeat(3 * 1024 * 1024);
    const text = JSON.stringify({ apiVersion: 'v1', kind: name, metadata: { name: 'web' } });
    const found = problems(decodeManifest(text, FILE));
    assert.equal(found.length, 1);
    assert.ok(found[0]!.length < 400, `a line of ${found[0]!.length} characters`);
    assert.match(found[0]!, new RegExp(`"X{200}"\\.\\.\\. \\(${3 * 1024 * 1024 - 200} more\\)`));
  });
});

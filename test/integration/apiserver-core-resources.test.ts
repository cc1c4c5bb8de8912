/**
 * The other core resources on a real orch-apiserver (SQLite): nodes (cluster-scoped, status
 * subresource, strategic merge of conditions, columns, cordon selector), configmaps, secrets
 * (base64, stringData, types, immutability), serviceaccounts, and coordination.orch.io leases
 * (renewals with resourceVersion conflicts), each through create/get/list/update/patch/delete
 * and a watch over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApiServer, v1Node, type ApiServer, type Response } from '../helpers/apiserver.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;
const causes = (r: Response): string[] => ((r.body.details as { causes?: { field: string }[] } | undefined)?.causes ?? []).map((c) => c.field).sort();
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

void describe('nodes, configmaps, secrets, serviceaccounts and leases', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite' });
  });
  after(async () => {
    await server.stop();
  });
  const api = (method: string, path: string, body?: unknown, contentType?: string, accept?: string): Promise<Response> =>
    server.client.request(method, path, {
      ...(body === undefined ? {} : { body }),
      ...(contentType === undefined ? {} : { contentType }),
      ...(accept === undefined ? {} : { headers: { Accept: accept } }),
    });

  /** The list's resourceVersion: a watch from it skips what the service account loops made in the namespace (its `default` account, kube-root-ca.crt). */
  const listVersion = async (path: string): Promise<string> => String(meta((await api('GET', path)).body).resourceVersion);

  void it('serves nodes: create with status, heartbeats through /status, cordon, columns, watch, delete', async () => {
    const watch = await server.client.watch('/api/v1/nodes?watch=true');
    try {
      const created = await api('POST', '/api/v1/nodes', v1Node('n1', 10250, { spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] } }));
      assert.equal(created.status, 201, created.text);
      assert.equal(meta(created.body).namespace, undefined);
      assert.equal(((created.body.status as Obj).daemonEndpoints as Obj).nodeagentEndpoint !== undefined, true);
      assert.equal((await watch.next()).type, 'ADDED');
      assert.equal((await api('GET', '/api/v1/namespaces/default/nodes/n1')).status, 404, 'nodes are cluster-scoped');
      const beat = await api('PATCH', '/api/v1/nodes/n1/status', {
        status: { conditions: [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status: 'False', reason: 'NodeagentNotReady' }] },
      }, STRATEGIC);
      assert.equal(beat.status, 200, beat.text);
      const conditions = (beat.body.status as Obj).conditions as Obj[];
      assert.deepEqual(conditions.map((c) => [c.type, c.status]), [['Ready', 'False'], ['MemoryPressure', 'False']], 'conditions merge by type');
      assert.equal((await watch.next()).type, 'MODIFIED');
      const cordon = await api('PATCH', '/api/v1/nodes/n1', { spec: { unschedulable: true }, status: { conditions: [] } }, STRATEGIC);
      assert.equal(((cordon.body.status as Obj).conditions as Obj[]).length, 2, 'the main resource never writes status');
      const table = (await api('GET', '/api/v1/nodes', undefined, undefined, TABLE)).body;
      assert.deepEqual((table.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
      const cells = ((table.rows as Obj[])[0] as { cells: unknown[] }).cells;
      assert.deepEqual([cells[0], cells[1], cells[2], cells[4], cells[5], cells[6]], ['n1', 'NotReady,SchedulingDisabled', 'worker', 'v1.30.0-orch', '127.0.0.1', '<none>']);
      const cordoned = (await api('GET', '/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue')).body;
      assert.equal((cordoned.items as Obj[]).length, 1);
      const cidr = await api('PATCH', '/api/v1/nodes/n1', { spec: { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] } }, MERGE);
      assert.equal(cidr.status, 422);
      assert.deepEqual(causes(cidr), ['spec.podCIDR', 'spec.podCIDRs']);
      const invalid = await api('POST', '/api/v1/nodes', {
        metadata: { name: 'bad' }, spec: { taints: [{ key: 'k', effect: 'Sometimes' }] }, status: { addresses: [{ type: 'Fancy', address: '' }] },
      });
      assert.equal(invalid.status, 422);
      assert.deepEqual(causes(invalid), ['spec.taints[0]', 'status.addresses[0].address', 'status.addresses[0].type']);
      assert.equal((await api('DELETE', '/api/v1/nodes/n1')).status, 200);
      assert.equal((await watch.next()).type, 'MODIFIED', 'the cordon');
      assert.equal((await watch.next()).type, 'DELETED');
    } finally {
      watch.close();
    }
  });

  void it('serves configmaps: data and binaryData, key rules, size, immutable', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const watch = await server.client.watch(`${path}?watch=true&resourceVersion=${await listVersion(path)}`);
    try {
      const created = await api('POST', path, { metadata: { name: 'cfg' }, data: { 'app.conf': 'x=1' }, binaryData: { blob: b64('\x00\x01') } });
      assert.equal(created.status, 201, created.text);
      assert.equal((await watch.next()).type, 'ADDED');
      const patched = await api('PATCH', `${path}/cfg`, { data: { 'more.conf': 'y=2' } }, STRATEGIC);
      assert.deepEqual(patched.body.data, { 'app.conf': 'x=1', 'more.conf': 'y=2' });
      assert.equal((await watch.next()).type, 'MODIFIED');
      const put = await api('PUT', `${path}/cfg`, { ...patched.body, data: { only: 'this' }, immutable: true });
      assert.equal(put.status, 200, put.text);
      const frozen = await api('PATCH', `${path}/cfg`, { data: { only: 'that' } }, MERGE);
      assert.equal(frozen.status, 422);
      assert.deepEqual(causes(frozen), ['data']);
      assert.equal((await api('PATCH', `${path}/cfg`, { metadata: { labels: { a: 'b' } } }, MERGE)).status, 200, 'metadata stays writable');
      const bad = await api('POST', path, { metadata: { name: 'bad' }, data: { 'a/b': '1', dup: '1' }, binaryData: { dup: b64('1'), raw: 'not base64!' } });
      assert.equal(bad.status, 422);
      assert.deepEqual(causes(bad), ['binaryData', 'binaryData[raw]', 'data']);
      const big = await api('POST', path, { metadata: { name: 'big' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } });
      assert.equal(big.status, 422);
      const table = (await api('GET', path, undefined, undefined, TABLE)).body;
      assert.deepEqual((table.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Data', 'Age']);
      assert.equal(((table.rows as Obj[])[0] as { cells: unknown[] }).cells[1], 2, 'one data key and one binaryData key');
      assert.equal((await api('DELETE', `${path}/cfg`)).body.status, 'Success');
      // The PUT and the label patch, then the deletion.
      assert.equal((await watch.next()).type, 'MODIFIED');
      assert.equal((await watch.next()).type, 'MODIFIED');
      assert.equal((await watch.next()).type, 'DELETED');
    } finally {
      watch.close();
    }
  });

  void it('serves secrets: base64 data, stringData merged and never stored, types, type immutable', async () => {
    const path = '/api/v1/namespaces/default/secrets';
    const watch = await server.client.watch(`${path}?watch=true&fieldSelector=metadata.name%3Ds1`);
    const created = await api('POST', path, { metadata: { name: 's1' }, data: { user: b64('admin'), pass: b64('old') }, stringData: { pass: 'new', extra: 'e' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.data, { user: b64('admin'), pass: b64('new'), extra: b64('e') });
    assert.equal(created.body.stringData, undefined);
    assert.equal(created.body.type, 'Opaque');
    const patched = await api('PATCH', `${path}/s1`, { stringData: { pass: 'newer' } }, MERGE);
    assert.equal(patched.status, 200, patched.text);
    assert.equal((patched.body.data as Obj).pass, b64('newer'));
    assert.equal(patched.body.stringData, undefined);
    const typeChange = await api('PATCH', `${path}/s1`, { type: 'orch.io/tls' }, MERGE);
    assert.equal(typeChange.status, 422);
    assert.ok(causes(typeChange).includes('type'));
    const notB64 = await api('POST', path, { metadata: { name: 's2' }, data: { k: 'abc$' } });
    assert.equal(notB64.status, 400);
    assert.match(String(notB64.body.message), /illegal base64 data at input byte 3/);
    const tls = await api('POST', path, { metadata: { name: 'tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } });
    assert.equal(tls.status, 422);
    assert.deepEqual(causes(tls), ['data[tls.key]']);
    const docker = await api('POST', path, { metadata: { name: 'reg' }, type: 'orch.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{"auths":{}}' } });
    assert.equal(docker.status, 201, docker.text);
    const typed = (await api('GET', `${path}?fieldSelector=type%3Dorch.io%2Fdockerconfigjson`)).body;
    assert.deepEqual((typed.items as Obj[]).map((s) => meta(s).name), ['reg']);
    const table = (await api('GET', `${path}/s1`, undefined, undefined, TABLE)).body;
    assert.deepEqual(((table.rows as Obj[])[0] as { cells: unknown[] }).cells.slice(0, 3), ['s1', 'Opaque', 3]);
    const put = await api('PUT', `${path}/s1`, { ...patched.body, stringData: { only: 'one' }, data: null });
    assert.deepEqual(put.body.data, { only: b64('one') });
    assert.equal((await api('DELETE', `${path}/s1`)).status, 200);
    try {
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await watch.next()).type);
      assert.deepEqual(seen, ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    } finally {
      watch.close();
    }
  });

  void it('serves serviceaccounts', async () => {
    const path = '/api/v1/namespaces/default/serviceaccounts';
    const watch = await server.client.watch(`${path}?watch=true&resourceVersion=${await listVersion(path)}`);
    const created = await api('POST', path, { metadata: { name: 'builder' }, secrets: [{ name: 'tok' }], imagePullSecrets: [{ name: 'reg' }], automountServiceAccountToken: false });
    assert.equal(created.status, 201, created.text);
    const patched = await api('PATCH', `${path}/builder`, { secrets: [{ name: 'other' }] }, STRATEGIC);
    assert.deepEqual((patched.body.secrets as Obj[]).map((s) => s.name), ['tok', 'other'], 'secrets merge by name');
    const table = (await api('GET', path, undefined, undefined, TABLE)).body;
    assert.deepEqual((table.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Secrets', 'Age']);
    const put = await api('PUT', `${path}/builder`, { ...patched.body, automountServiceAccountToken: true });
    assert.equal(put.body.automountServiceAccountToken, true);
    const bad = await api('PUT', `${path}/builder`, { ...put.body, imagePullSecrets: [{ name: 'Not_Valid' }] });
    assert.equal(bad.status, 422);
    assert.deepEqual(causes(bad), ['imagePullSecrets[0].name']);
    assert.equal((await api('DELETE', `${path}/builder`)).status, 200);
    try {
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await watch.next()).type);
      assert.deepEqual(seen, ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    } finally {
      watch.close();
    }
  });

  void it('serves leases: micro-time renewals with optimistic concurrency (409 on a stale renew)', async () => {
    const path = '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases';
    const watch = await server.client.watch(`${path}?watch=true`);
    try {
      const created = await api('POST', path, {
        apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'n1' },
        spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2024-05-01T10:00:00.123456Z', acquireTime: '2024-05-01T10:00:00Z', leaseTransitions: 0 },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal((created.body.spec as Obj).acquireTime, '2024-05-01T10:00:00.000000Z', 'micro-time with six digits');
      assert.equal((await watch.next()).type, 'ADDED');
      const renew = (rv: unknown, time: string): Promise<Response> =>
        api('PUT', `${path}/n1`, { ...created.body, metadata: { ...meta(created.body), resourceVersion: rv }, spec: { ...(created.body.spec as Obj), renewTime: time } });
      const first = await renew(meta(created.body).resourceVersion, '2024-05-01T10:00:10.000001Z');
      assert.equal(first.status, 200, first.text);
      const stale = await renew(meta(created.body).resourceVersion, '2024-05-01T10:00:20Z');
      assert.equal(stale.status, 409);
      assert.equal(stale.body.reason, 'Conflict');
      assert.match(String(stale.body.message), /^Operation cannot be fulfilled on leases\.coordination\.orch\.io "n1": the object has been modified/);
      const renewed = await watch.next();
      assert.deepEqual([renewed.type, (renewed.object.spec as Obj).renewTime], ['MODIFIED', '2024-05-01T10:00:10.000001Z']);
      const bad = await api('PATCH', `${path}/n1`, { spec: { leaseDurationSeconds: 0 } }, MERGE);
      assert.equal(bad.status, 422);
      assert.deepEqual(causes(bad), ['spec.leaseDurationSeconds']);
      const table = (await api('GET', path, undefined, undefined, TABLE)).body;
      assert.deepEqual(((table.rows as Obj[])[0] as { cells: unknown[] }).cells.slice(0, 2), ['n1', 'n1']);
      assert.equal((await api('DELETE', `${path}/n1`)).status, 200);
      assert.equal((await watch.next()).type, 'DELETED');
    } finally {
      watch.close();
    }
  });

  void it('advertises the new resources in discovery, with short names and subresources', async () => {
    const core = (await api('GET', '/api/v1')).body;
    const byName = new Map((core.resources as Obj[]).map((r) => [r.name, r]));
    assert.deepEqual((byName.get('nodes') as Obj).shortNames, ['no']);
    assert.deepEqual((byName.get('configmaps') as Obj).shortNames, ['cm']);
    assert.deepEqual((byName.get('serviceaccounts') as Obj).shortNames, ['sa']);
    assert.equal((byName.get('pods/exec') as Obj).kind, 'PodExecOptions');
    assert.deepEqual((byName.get('pods/log') as Obj).verbs, ['get']);
    assert.ok(byName.has('nodes/status') && byName.has('pods/status') && byName.has('pods/portforward') && byName.has('pods/attach'));
    const groups = (await api('GET', '/apis')).body;
    const names = (groups.groups as Obj[]).map((g) => g.name);
    for (const g of ['coordination.orch.io', 'authentication.orch.io', 'authorization.orch.io', 'certificates.orch.io']) assert.ok(names.includes(g), g);
    assert.ok(!names.includes('authorization.k8s.io'), 'the hidden compatibility view is not advertised');
    const openapi = (await api('GET', '/openapi/v3')).body;
    assert.ok(Object.keys(openapi.paths as Obj).includes('apis/coordination.orch.io/v1'));
  });
});

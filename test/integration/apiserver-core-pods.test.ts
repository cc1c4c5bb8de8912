/**
 * Core v1 pods on a real orch-apiserver, on SQLite and on etcd: defaults and validation on
 * create (422 naming the fields), the status subresource, the spec's immutability, graceful
 * deletion as the node agent drives it (DELETE marks, the watch sees MODIFIED, DELETE with
 * gracePeriodSeconds=0 removes), immediate deletion of unbound and terminal pods, the field
 * selectors the node agent uses (spec.nodeName) in lists and watches, and the Table columns.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApiServer, v1Pod, type ApiServer, type Response } from '../helpers/apiserver.js';

type Obj = Record<string, unknown>;
const meta = (o: Obj): Obj => o.metadata as Obj;
const spec = (o: Obj): Obj => o.spec as Obj;
const status = (o: Obj): Obj => o.status as Obj;
const causes = (r: Response): string[] => ((r.body.details as { causes?: { field: string }[] } | undefined)?.causes ?? []).map((c) => c.field).sort();
const PODS = '/api/v1/namespaces/default/pods';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

for (const storage of ['sqlite', 'etcd'] as const) {
  void describe(`pods on ${storage}`, () => {
    let server: ApiServer;
    before(async () => {
      server = await startApiServer({ storage });
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

    void it('applies upstream\'s defaults on create and resets the status to Pending with the QoS class', async () => {
      const created = await api('POST', PODS, v1Pod('defaults', 'n1', { status: { phase: 'Running' } }));
      assert.equal(created.status, 201, created.text);
      const s = spec(created.body);
      assert.equal(s.restartPolicy, 'Always');
      assert.equal(s.dnsPolicy, 'ClusterFirst');
      assert.equal(s.terminationGracePeriodSeconds, 30);
      assert.equal(s.schedulerName, 'default-scheduler');
      const c = (s.containers as Obj[])[0] as Obj;
      assert.equal(c.imagePullPolicy, 'IfNotPresent');
      assert.equal(c.terminationMessagePath, '/dev/termination-log');
      assert.deepEqual(status(created.body), { phase: 'Pending', qosClass: 'BestEffort' });
      const guaranteed = v1Pod('guaranteed', '', {});
      ((spec(guaranteed).containers as Obj[])[0] as Obj).resources = { limits: { cpu: 1, memory: '64Mi' } };
      const g = await api('POST', PODS, guaranteed);
      assert.equal(g.status, 201, g.text);
      assert.equal(status(g.body).qosClass, 'Guaranteed');
      assert.deepEqual(((spec(g.body).containers as Obj[])[0] as Obj).resources, { limits: { cpu: '1', memory: '64Mi' }, requests: { cpu: '1', memory: '64Mi' } });
    });

    void it('rejects invalid pods with 422 naming every field, and unknown fields with 400', async () => {
      const bad = await api('POST', PODS, {
        metadata: { name: 'Bad_Name' },
        spec: { restartPolicy: 'Sometimes', containers: [{ name: 'c' }, { name: 'c', image: 'x', ports: [{ containerPort: 70000 }] }] },
      });
      assert.equal(bad.status, 422, bad.text);
      assert.equal(bad.body.reason, 'Invalid');
      const fields = causes(bad);
      for (const f of ['metadata.name', 'spec.restartPolicy', 'spec.containers[0].image', 'spec.containers[1].name', 'spec.containers[1].ports[0].containerPort']) {
        assert.ok(fields.includes(f), `${f} in ${fields.join(', ')}`);
      }
      assert.match(String(bad.body.message), /^Pod "Bad_Name" is invalid: \[/);
      const none = await api('POST', PODS, { metadata: { name: 'empty' }, spec: { containers: [] } });
      assert.equal(none.status, 422);
      assert.deepEqual(causes(none), ['spec.containers']);
      const unknown = await api('POST', PODS, { ...v1Pod('unknown', ''), spec: { containers: [{ name: 'c', image: 'x', imagePullPolcy: 'Always' }] } });
      assert.equal(unknown.status, 400);
      assert.match(String(unknown.body.message), /unknown field "spec\.containers\[0\]\.imagePullPolcy"/);
    });

    void it('keeps the spec immutable but for images, activeDeadlineSeconds and added tolerations', async () => {
      const created = (await api('POST', PODS, v1Pod('immutable', 'n1'))).body;
      const merge = 'application/merge-patch+json';
      const strategic = 'application/strategic-merge-patch+json';
      const image = await api('PATCH', `${PODS}/immutable`, { spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] } }, strategic);
      assert.equal(image.status, 200, image.text);
      assert.equal(((spec(image.body).containers as Obj[])[0] as Obj).image, 'busybox:1.37');
      assert.equal(((spec(image.body).containers as Obj[])[0] as Obj).command !== undefined, true, 'strategic merge keeps the other fields');
      // A merge patch replaces the list: it keeps the tolerations DefaultTolerationSeconds added at creation.
      const defaulted = spec(created).tolerations as Obj[];
      assert.equal(defaulted.length, 2);
      const deadline = await api('PATCH', `${PODS}/immutable`, { spec: { activeDeadlineSeconds: 60, tolerations: [...defaulted, { key: 'k', operator: 'Exists' }] } }, merge);
      assert.equal(deadline.status, 200, deadline.text);
      const longer = await api('PATCH', `${PODS}/immutable`, { spec: { activeDeadlineSeconds: 120 } }, merge);
      assert.equal(longer.status, 422);
      assert.deepEqual(causes(longer), ['spec.activeDeadlineSeconds']);
      // DefaultTolerationSeconds puts its two back on updates too (as upstream): only `k` is lost.
      const removed = await api('PATCH', `${PODS}/immutable`, { spec: { tolerations: null } }, merge);
      assert.equal(removed.status, 422);
      assert.deepEqual(causes(removed), ['spec.tolerations[2]']);
      const node = await api('PATCH', `${PODS}/immutable`, { spec: { nodeName: 'n2', restartPolicy: 'Never' } }, merge);
      assert.equal(node.status, 422);
      assert.deepEqual(causes(node), ['spec']);
      assert.match(String(node.body.message), /pod updates may not change fields other than/);
      const labels = await api('PATCH', `${PODS}/immutable`, { metadata: { labels: { app: 'web' } } }, merge);
      assert.equal(labels.status, 200, labels.text);
      assert.equal(meta(labels.body).uid, meta(created).uid);
    });

    void it('writes status only through the status subresource', async () => {
      await api('POST', PODS, v1Pod('stat', 'n1'));
      const ignored = await api('PATCH', `${PODS}/stat`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
      assert.equal(status(ignored.body).phase, 'Pending');
      const running = {
        phase: 'Running', podIP: '10.0.0.5', podIPs: [{ ip: '10.0.0.5' }], startTime: '2024-05-01T10:00:00Z',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T10:00:01Z' }],
        containerStatuses: [{ name: 'c', ready: true, restartCount: 2, image: 'busybox:1.36', imageID: 'sha256:1', state: { running: { startedAt: '2024-05-01T10:00:01Z' } }, lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T10:00:00Z' } } }],
      };
      const updated = await api('PATCH', `${PODS}/stat/status`, { status: running, spec: { nodeName: 'elsewhere' } }, 'application/strategic-merge-patch+json');
      assert.equal(updated.status, 200, updated.text);
      assert.equal(status(updated.body).phase, 'Running');
      assert.equal(spec(updated.body).nodeName, 'n1', 'the status subresource leaves the spec alone');
      const badPhase = await api('PATCH', `${PODS}/stat/status`, { status: { phase: 'Sleeping' } }, 'application/merge-patch+json');
      assert.equal(badPhase.status, 422);
      assert.deepEqual(causes(badPhase), ['status.phase']);
      const table = (await api('GET', `${PODS}/stat`, undefined, undefined, TABLE)).body;
      assert.deepEqual((table.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
      const cells = ((table.rows as Obj[])[0] as { cells: unknown[] }).cells;
      assert.deepEqual(cells.slice(0, 3), ['stat', '1/1', 'Running']);
      assert.match(String(cells[3]), /^2 \(\S+ ago\)$/);
      assert.deepEqual(cells.slice(5), ['10.0.0.5', 'n1', '<none>', '<none>']);
    });

    void it('deletes gracefully: marked first (MODIFIED), removed by a delete with gracePeriodSeconds=0 (DELETED)', async () => {
      const created = (await api('POST', PODS, v1Pod('graceful', 'n1', { spec: { ...spec(v1Pod('g', 'n1')), terminationGracePeriodSeconds: 45 } }))).body;
      const watch = await server.client.watch(`${PODS}?watch=true&fieldSelector=metadata.name%3Dgraceful&resourceVersion=${String(meta(created).resourceVersion)}`);
      try {
        const marked = await api('DELETE', `${PODS}/graceful`);
        assert.equal(marked.status, 200, marked.text);
        assert.equal(marked.body.kind, 'Pod', 'a pod being deleted is answered as the object');
        assert.equal(meta(marked.body).deletionGracePeriodSeconds, 45);
        const at = Date.parse(String(meta(marked.body).deletionTimestamp));
        assert.ok(at > Date.now() + 30_000 && at <= Date.now() + 46_000, `deletionTimestamp ${String(meta(marked.body).deletionTimestamp)} is now + 45 s`);
        const modified = await watch.next();
        assert.equal(modified.type, 'MODIFIED');
        assert.equal(meta(modified.object).deletionGracePeriodSeconds, 45);
        const shorter = await api('DELETE', `${PODS}/graceful`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 10 });
        assert.equal(meta(shorter.body).deletionGracePeriodSeconds, 10, 'a shorter grace period replaces the running one');
        assert.equal((await watch.next()).type, 'MODIFIED');
        const longer = await api('DELETE', `${PODS}/graceful?gracePeriodSeconds=60`);
        assert.equal(meta(longer.body).deletionGracePeriodSeconds, 10, 'never extended');
        const statusWrite = await api('PATCH', `${PODS}/graceful/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
        assert.equal(statusWrite.status, 200, 'the node agent may still write the status of a terminating pod');
        assert.equal((await watch.next()).type, 'MODIFIED');
        const gone = await api('DELETE', `${PODS}/graceful`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: meta(created).uid } });
        assert.equal(gone.status, 200, gone.text);
        const deleted = await watch.next();
        assert.equal(deleted.type, 'DELETED');
        assert.equal((await api('GET', `${PODS}/graceful`)).status, 404);
      } finally {
        watch.close();
      }
    });

    void it('deletes unbound and terminal pods at once', async () => {
      await api('POST', PODS, v1Pod('unbound', ''));
      const unbound = await api('DELETE', `${PODS}/unbound`);
      assert.equal(unbound.status, 200);
      assert.equal((await api('GET', `${PODS}/unbound`)).status, 404);
      await api('POST', PODS, v1Pod('done', 'n1'));
      await api('PATCH', `${PODS}/done/status`, { status: { phase: 'Succeeded' } }, 'application/merge-patch+json');
      assert.equal((await api('DELETE', `${PODS}/done`)).status, 200);
      assert.equal((await api('GET', `${PODS}/done`)).status, 404);
    });

    void it('selects by spec.nodeName and status.phase in lists and watches, across namespaces', async () => {
      assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: 'sel' } })).status, 201);
      for (const [name, node] of [['a1', 'node-a'], ['b1', 'node-b'], ['a2', 'node-a']] as const) {
        assert.equal((await api('POST', '/api/v1/namespaces/sel/pods', v1Pod(name, node))).status, 201);
      }
      const list = (await api('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a')).body;
      assert.deepEqual((list.items as Obj[]).map((p) => meta(p).name), ['a1', 'a2']);
      const rv = String(meta(list).resourceVersion);
      const phase = (await api('GET', '/api/v1/namespaces/sel/pods?fieldSelector=spec.nodeName%3Dnode-b,status.phase%3DPending')).body;
      assert.deepEqual((phase.items as Obj[]).map((p) => meta(p).name), ['b1']);
      assert.equal((await api('GET', '/api/v1/pods?fieldSelector=spec.nodeNam%3Dx')).status, 400);
      const watch = await server.client.watch(`/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=${rv}`);
      try {
        await api('POST', '/api/v1/namespaces/sel/pods', v1Pod('b2', 'node-b'));
        await api('POST', '/api/v1/namespaces/sel/pods', v1Pod('a3', 'node-a'));
        const added = await watch.next();
        assert.equal(added.type, 'ADDED');
        assert.equal(meta(added.object).name, 'a3', 'the pod of another node is not sent');
        await api('PATCH', '/api/v1/namespaces/sel/pods/a1/status', { status: { phase: 'Running' } }, 'application/merge-patch+json');
        const modified = await watch.next();
        assert.equal(modified.type, 'MODIFIED');
        assert.equal(meta(modified.object).name, 'a1');
        await api('DELETE', '/api/v1/namespaces/sel/pods/a2', { gracePeriodSeconds: 0 });
        const deleted = await watch.next();
        assert.deepEqual([deleted.type, meta(deleted.object).name], ['DELETED', 'a2']);
      } finally {
        watch.close();
      }
    });
  });
}

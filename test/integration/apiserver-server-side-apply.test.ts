/**
 * Server-side apply with every kubectl of the machine, 1.27 to 1.33, against one orch-apiserver
 * (SQLite): `apply --server-side` creates and updates a ConfigMap, a Pod and a Node's label set;
 * two field managers conflict and `--force-conflicts` settles it; `--field-manager`; a field
 * dropped from the applied file is removed; `--dry-run=server` writes nothing; a client-side
 * apply followed by a server-side apply of the same object (kubectl's managed-fields
 * migration); `get --show-managed-fields`. The versions run side by side, each on objects of
 * its own (suffixed with the version). Bad apply patches are refused with 400/422 naming the
 * field, and nothing is written. `--validate=strict|warn` with create, replace and both applies.
 * A StorageClass and a PersistentVolumeClaim applied by their list types, the claim's status
 * writer recorded apart.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApiServer, v1Node, type ApiServer } from '../helpers/apiserver.js';
import { kubectl, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];

let server: ApiServer;
let binaries: Map<string, string>;
let dir: string;

interface Entry {
  readonly manager: string;
  readonly operation: string;
  readonly subresource?: string;
  readonly fieldsV1: Record<string, unknown>;
}

async function get(path: string): Promise<Record<string, unknown>> {
  const res = await server.client.request('GET', path);
  assert.equal(res.status, 200, `GET ${path}: ${res.text}`);
  return res.body;
}

const meta = (o: Record<string, unknown>): Record<string, unknown> => o.metadata as Record<string, unknown>;
const entriesOf = (o: Record<string, unknown>): Entry[] => (meta(o).managedFields ?? []) as Entry[];
const managersOf = (o: Record<string, unknown>): string[] => entriesOf(o).map((e) => `${e.manager}/${e.operation}`).sort();

before(async () => {
  binaries = kubectlBinaries(27, 33);
  dir = await mkdtemp(join(tmpdir(), 'ssa-kubectl-'));
  server = await startApiServer({ storage: 'sqlite' });
  // Pods need their namespace's default service account (made by the server's controller).
  await waitFor('the default service account', async () => (await server.client.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200, { timeoutMs: 30_000 });
});

after(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The steps of one kubectl version, on objects named after it. */
async function serverSideApply(version: string): Promise<void> {
  const binary = binaries.get(version);
  assert.ok(binary !== undefined, `kubectl ${version} is missing`);
  const tag = version.replace('.', '');
  const home = join(dir, `home-${tag}`);
  await mkdir(home, { recursive: true });
  const env: KubectlEnv = { binary, kubeconfig: server.adminKubeconfig, home };
  const file = async (name: string, text: string): Promise<string> => {
    const path = join(dir, `${name}-${tag}.yaml`);
    await writeFile(path, text);
    return path;
  };
  const k = async (...args: string[]): Promise<string> => (await kubectl(env, args)).stdout;
  const fails = async (args: string[], message: RegExp): Promise<void> => {
    await assert.rejects(kubectl(env, args), (err: unknown) => err instanceof Error && message.test(err.message), `kubectl ${args.join(' ')} should fail with ${String(message)}`);
  };

  // A ConfigMap: create, update, dropped field, --field-manager, conflicts and --force-conflicts, dry run.
  const cm = `cm-${tag}`;
  const cmPath = `/api/v1/namespaces/default/configmaps/${cm}`;
  const manifest = (data: string, labels = 'app: demo'): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cm}\n  labels: {${labels}}\ndata:\n${data}`;
  const applied = await file('cm', manifest('  a: "1"\n  b: "2"\n'));
  assert.match(await k('apply', '--server-side', '-f', applied), /serverside-applied/);
  let live = await get(cmPath);
  assert.deepEqual(live.data, { a: '1', b: '2' });
  assert.deepEqual(managersOf(live), ['kubectl/Apply']);
  assert.deepEqual(entriesOf(live)[0]?.fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
  await writeFile(applied, manifest('  a: "10"\n'));
  await k('apply', '--server-side', '-f', applied);
  live = await get(cmPath);
  assert.deepEqual(live.data, { a: '10' }, 'a changed, b (dropped from the file) removed');
  const other = await file('cm-other', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cm}\ndata:\n  a: "mine"\n  c: "3"\n`);
  await fails(['apply', '--server-side', '--field-manager=other', '-f', other], /Apply failed with 1 conflict: conflict with "kubectl": \.data\.a/);
  assert.deepEqual((await get(cmPath)).data, { a: '10' }, 'a refused apply writes nothing');
  await k('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', other);
  live = await get(cmPath);
  assert.deepEqual(live.data, { a: 'mine', c: '3' });
  assert.deepEqual(managersOf(live), ['kubectl/Apply', 'other/Apply']);
  const dry = await file('cm-dry', manifest('  a: "dry"\n'));
  await k('apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', dry);
  assert.deepEqual((await get(cmPath)).data, { a: 'mine', c: '3' }, '--dry-run=server writes nothing');
  const yaml = await k('get', 'configmap', cm, '-o', 'yaml', '--show-managed-fields');
  assert.match(yaml, /managedFields:\n\s+- apiVersion: v1\n\s+fieldsType: FieldsV1\n\s+fieldsV1:/);
  assert.match(yaml, /manager: other\n\s+operation: Apply\n\s+time: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/);
  assert.doesNotMatch(await k('get', 'configmap', cm, '-o', 'yaml'), /managedFields/);

  // A Pod: created by apply, its image changed by a second apply, labels merged with kubectl label's.
  const pod = `web-${tag}`;
  const podManifest = (image: string): string => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${pod}\n  labels: {app: web}\nspec:\n  tolerations: [{key: example.com/special, operator: Exists}]\n  containers:\n  - name: main\n    image: ${image}\n    command: [sh, -c, sleep 3600]\n    ports: [{containerPort: 8080}]\n    env: [{name: MODE, value: test}]\n`;
  const podFile = await file('pod', podManifest('busybox:1.35'));
  await k('apply', '--server-side', '-f', podFile);
  await k('label', 'pod', pod, 'extra=1');
  await writeFile(podFile, podManifest('busybox:1.36'));
  await k('apply', '--server-side', '-f', podFile);
  const livePod = await get(`/api/v1/namespaces/default/pods/${pod}`);
  const spec = livePod.spec as { containers: { image: string }[] };
  assert.equal(spec.containers[0]?.image, 'busybox:1.36');
  assert.deepEqual(meta(livePod).labels, { app: 'web', extra: '1' });
  assert.deepEqual(managersOf(livePod), ['kubectl-label/Update', 'kubectl/Apply']);
  const podFields = entriesOf(livePod).find((e) => e.manager === 'kubectl')?.fieldsV1 as { 'f:spec': { 'f:containers': Record<string, Record<string, unknown>> } };
  assert.ok('k:{"containerPort":8080,"protocol":"TCP"}' in (podFields['f:spec']['f:containers']['k:{"name":"main"}']?.['f:ports'] as object), 'ports are keyed by port and protocol');

  // A Node's label set, by a manager of its own; a label dropped from the file goes.
  const node = `node-${tag}`;
  const created = await server.client.request('POST', '/api/v1/nodes', { body: v1Node(node, 10250) });
  assert.equal(created.status, 201, created.text);
  const labels = await file('node', `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n  labels: {zone: a, rack: r1}\n`);
  await k('apply', '--server-side', '--field-manager=labeller', '-f', labels);
  assert.deepEqual(meta(await get(`/api/v1/nodes/${node}`)).labels, { 'node-role.orch.io/worker': '', zone: 'a', rack: 'r1' });
  await writeFile(labels, `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n  labels: {zone: b}\n`);
  await k('apply', '--server-side', '--field-manager=labeller', '-f', labels);
  assert.deepEqual(meta(await get(`/api/v1/nodes/${node}`)).labels, { 'node-role.orch.io/worker': '', zone: 'b' });

  // Client-side apply, then server-side apply of the same object: no conflict, the client-side
  // manager's fields handed over (kubectl's migration), a field dropped since then removed.
  const csa = `csa-${tag}`;
  const csaFile = await file('csa', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${csa}\ndata:\n  a: "1"\n  b: "2"\n`);
  await k('apply', '-f', csaFile);
  assert.deepEqual(managersOf(await get(`/api/v1/namespaces/default/configmaps/${csa}`)), ['kubectl-client-side-apply/Update']);
  await writeFile(csaFile, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${csa}\ndata:\n  a: "10"\n`);
  await k('apply', '--server-side', '-f', csaFile);
  const upgraded = await get(`/api/v1/namespaces/default/configmaps/${csa}`);
  assert.deepEqual(upgraded.data, { a: '10' }, 'applied without --force-conflicts; b removed once kubectl owns what client-side apply did');
  assert.ok(!managersOf(upgraded).includes('kubectl-client-side-apply/Update'), managersOf(upgraded).join(', '));
  const lastApplied = (meta(upgraded).annotations as Record<string, string>)['kubectl.kubernetes.io/last-applied-configuration'] ?? '';
  assert.deepEqual((JSON.parse(lastApplied) as { data: unknown }).data, { a: '10' }, 'the last-applied annotation follows the server-side apply');
  // And back: a client-side apply computes its patch from that annotation.
  await writeFile(csaFile, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${csa}\ndata:\n  c: "3"\n`);
  await k('apply', '-f', csaFile);
  assert.deepEqual((await get(`/api/v1/namespaces/default/configmaps/${csa}`)).data, { c: '3' });

  // --validate=strict|warn: kubectl finds fieldValidation in the server's OpenAPI and sends it;
  // an unknown field refuses a create, replace or client-side apply (a patch), or is a warning.
  const strict = `strict-${tag}`;
  const unknownFile = await file('unknown', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${strict}\ndata: {a: "1"}\ndatum: {x: y}\n`);
  await fails(['create', '--validate=strict', '-f', unknownFile], /strict decoding error: unknown field "datum"/);
  const warned = await kubectl(env, ['create', '--validate=warn', '-f', unknownFile]);
  assert.match(warned.stderr, /Warning: unknown field "datum"/);
  await fails(['replace', '--validate=strict', '-f', unknownFile], /strict decoding error: unknown field "datum"/);
  assert.match((await kubectl(env, ['replace', '--validate=warn', '-f', unknownFile])).stderr, /Warning: unknown field "datum"/);
  const patchFile = await file('unknown-csa', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${csa}\ndata: {c: "4"}\ndatum: {x: y}\n`);
  await fails(['apply', '--validate=strict', '-f', patchFile], /strict decoding error: unknown field "datum"/);
  assert.deepEqual((await get(`/api/v1/namespaces/default/configmaps/${csa}`)).data, { c: '3' }, 'a refused patch writes nothing');
  await fails(['apply', '--server-side', '--validate=strict', '-f', patchFile], /\.datum: field not declared in schema/);
}

void describe('kubectl apply --server-side with every kubectl', () => {
  void it('creates, updates, conflicts, forces, drops fields, dry-runs and upgrades client-side apply, kubectl 1.27 to 1.33', { timeout: 600_000 }, async () => {
    const failures: string[] = [];
    // Three at a time: the machine has two cores, and each kubectl is a process of its own.
    const queue = [...VERSIONS];
    const worker = async (): Promise<void> => {
      for (let v = queue.shift(); v !== undefined; v = queue.shift()) {
        try {
          await serverSideApply(v);
        } catch (err) {
          failures.push(`kubectl ${v}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    assert.deepEqual(failures, [], failures.join('\n\n'));
  });

  void it('applies storage objects by their list types and keeps a status writer apart', async () => {
    const binary = binaries.get(VERSIONS[VERSIONS.length - 1] ?? '');
    assert.ok(binary !== undefined, 'the newest kubectl is missing');
    const env: KubectlEnv = { binary, kubeconfig: server.adminKubeconfig, home: join(dir, 'home-storage') };
    await mkdir(env.home, { recursive: true });
    const path = join(dir, 'storage.yaml');
    const manifests = (labels: string): string => [
      'apiVersion: storage.orch.io/v1\nkind: StorageClass\nmetadata: {name: local}\nprovisioner: orch.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n',
      `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default, labels: {${labels}}}\nspec:\n  storageClassName: local\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  selector: {matchLabels: {tier: fast}}\n`,
    ].join('---\n');
    await writeFile(path, manifests('app: db, tier: fast'));
    await kubectl(env, ['apply', '--server-side', '-f', path]);
    const pvcPath = '/api/v1/namespaces/default/persistentvolumeclaims/data';
    let pvc = await get(pvcPath);
    assert.deepEqual(entriesOf(pvc).find((e) => e.manager === 'kubectl')?.fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} } },
      'f:spec': { 'f:accessModes': {}, 'f:resources': { 'f:requests': { 'f:storage': {} } }, 'f:selector': {}, 'f:storageClassName': {} },
    }, 'access modes and the selector are atomic');
    assert.deepEqual(entriesOf(await get('/apis/storage.orch.io/v1/storageclasses/local')).map((e) => Object.keys(e.fieldsV1).sort()), [['f:provisioner', 'f:volumeBindingMode']]);
    // A status writer is recorded apart (subresource status) and never conflicts with the applier.
    const bound = { ...pvc, status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } };
    const put = await server.client.request('PUT', `${pvcPath}/status?fieldManager=binder`, { body: bound });
    assert.equal(put.status, 200, put.text);
    pvc = await get(pvcPath);
    const status = entriesOf(pvc).find((e) => e.manager === 'binder');
    assert.equal(status?.subresource, 'status');
    assert.deepEqual(status.fieldsV1, { 'f:status': { 'f:accessModes': {}, 'f:capacity': { '.': {}, 'f:storage': {} }, 'f:phase': {} } }, 'the capacity map is new: "." marks it');
    assert.match((await kubectl(env, ['get', 'pvc', 'data', '-o', 'yaml', '--show-managed-fields'])).stdout, /manager: binder\n\s+operation: Update\n\s+subresource: status\n/);
    // A label dropped from the file goes (the spec is immutable once created); the status stays the binder's.
    await writeFile(path, manifests('app: db'));
    await kubectl(env, ['apply', '--server-side', '-f', path]);
    pvc = await get(pvcPath);
    assert.deepEqual(meta(pvc).labels, { app: 'db' });
    assert.equal((pvc.status as Record<string, unknown>).phase, 'Bound');
  });

  void it('refuses bad apply patches with 400/422 naming what is wrong, writing nothing', async () => {
    const path = '/api/v1/namespaces/default/configmaps/bad';
    const send = (body: string, query = 'fieldManager=t'): ReturnType<typeof server.client.request> =>
      server.client.request('PATCH', `${path}?${query}`, { body, contentType: 'application/apply-patch+yaml' });
    const cases: [string, string, number, RegExp][] = [
      ['not an object', '- a\n- b\n', 400, /an apply patch must be an object/],
      ['another object', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n', 400, /metadata.name of an apply patch must name the object/],
      ['wrong apiVersion', 'apiVersion: v9\nkind: ConfigMap\nmetadata: {name: bad}\n', 400, /invalid object type: \/v9, Kind=ConfigMap: .*apiVersion "v1"/],
      ['wrong kind', 'apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\n', 400, /invalid object type: \/v1, Kind=Secret: .*kind "ConfigMap"/],
      ['unknown field', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndatum: {a: b}\n', 400, /\.datum: field not declared in schema/],
      ['duplicate item', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, finalizers: [a/b, a/b]}\n', 400, /\.metadata\.finalizers: duplicate entries for key \[="a\/b"\]/],
    ];
    for (const [what, body, status, message] of cases) {
      const res = await send(body);
      assert.equal(res.status, status, `${what}: ${res.text}`);
      assert.match(String(res.body.message), message, what);
    }
    const noManager = await send('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\n', '');
    assert.equal(noManager.status, 422, noManager.text);
    assert.deepEqual((noManager.body.details as { causes: unknown[] }).causes, [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }]);
    const cbor = await server.client.request('PATCH', `${path}?fieldManager=t`, { body: Buffer.from([0xa0]), contentType: 'application/apply-patch+cbor' });
    assert.equal(cbor.status, 415, cbor.text);
    assert.equal((await server.client.request('GET', path)).status, 404, 'nothing was written');
  });
});

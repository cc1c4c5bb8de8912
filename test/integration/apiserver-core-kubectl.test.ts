/**
 * The real kubectl (/usr/bin/kubectl: the dispatcher runs 1.30 for this server) against the core
 * resources of a real orch-apiserver in Policy mode: create -f of a node and a pod, get nodes,
 * get pods -o wide, describe pod, cordon, get -w, delete --grace-period=0 --force (and what it
 * sends), configmaps/secrets/serviceaccounts/leases, get csr, certificate approve and deny,
 * describe/patch/delete of each kind, and auth can-i for an admin and for a user the policy
 * does not allow.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { KUBECTL, makeCsr, runKubectl, startApiServer, v1Csr, v1Node, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const BOB = 'bob-token-0123456789';

const POD_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  nodeName: n1
  containers:
  - name: web
    image: busybox:1.36
    command: [sleep, "3600"]
    resources: {limits: {cpu: 100m, memory: 64Mi}}
`;

void describe('kubectl against the core resources', () => {
  let server: ApiServer;
  const kubectl = (...args: string[]): Promise<{ stdout: string; stderr: string }> => runKubectl(server, args);
  before(async () => {
    server = await startApiServer({ storage: 'sqlite', policy: '- group: dev\n  verbs: [get]\n  resources: [pods]\n', tokens: [{ token: BOB, user: 'bob', groups: ['dev'] }] });
    mkdirSync(join(server.dir, 'home'), { recursive: true });
  });
  after(async () => {
    await server.stop();
  });

  void it('creates a node and a pod from files; get nodes, get pods -o wide, describe pod', async () => {
    writeFileSync(join(server.dir, 'node.yaml'), stringify(v1Node('n1', 10250)));
    writeFileSync(join(server.dir, 'pod.yaml'), POD_YAML);
    assert.match((await kubectl('create', '-f', join(server.dir, 'node.yaml'))).stdout, /^node\/n1 created$/m);
    assert.match((await kubectl('create', '-f', join(server.dir, 'pod.yaml'))).stdout, /^pod\/web created$/m);
    const nodes = (await kubectl('get', 'nodes')).stdout.split('\n');
    assert.match(nodes[0] ?? '', /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    assert.match(nodes[1] ?? '', /^n1\s+Ready\s+worker\s+\S+\s+v1\.30\.0-orch$/);
    const wide = (await kubectl('get', 'pods', '-o', 'wide')).stdout.split('\n');
    assert.match(wide[0] ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    assert.match(wide[1] ?? '', /^web\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+n1\s+<none>\s+<none>$/);
    const described = (await kubectl('describe', 'pod', 'web')).stdout;
    for (const line of [/^Name:\s+web$/m, /^Node:\s+n1\/$/m, /^Status:\s+Pending$/m, /^Labels:\s+app=web$/m, /^\s+Image:\s+busybox:1\.36$/m, /^QoS Class:\s+Guaranteed$/m, /^Events:\s+<none>$/m]) {
      assert.match(described, line);
    }
    assert.match((await kubectl('describe', 'node', 'n1')).stdout, /^\s+default\s+web\s+100m \(5%\)/m, 'describe node lists the node\'s pods');
  });

  void it('cordons a node and shows it with get -w as it changes', async () => {
    assert.match((await kubectl('cordon', 'n1')).stdout, /node\/n1 cordoned/);
    assert.match((await kubectl('get', 'no', 'n1')).stdout, /^n1\s+Ready,SchedulingDisabled\s+worker/m);
    const child = spawn(KUBECTL, ['get', 'pods', '-w'], { env: { ...process.env, HOME: join(server.dir, 'home'), KUBECONFIG: server.adminKubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<void>((resolve) => child.once('exit', () => {
      resolve();
    }));
    try {
      await waitFor('get -w to list web', () => /^web\s+0\/1\s+Pending/m.test(out), { timeoutMs: 30_000 });
      await server.client.request('PATCH', '/api/v1/namespaces/default/pods/web/status', {
        body: { status: { phase: 'Running', containerStatuses: [{ name: 'web', ready: true, restartCount: 0, image: 'busybox:1.36', imageID: 'sha256:1', state: { running: { startedAt: new Date().toISOString().slice(0, 19) + 'Z' } } }] } },
        contentType: 'application/merge-patch+json',
      });
      await waitFor('get -w to show web running', () => /^web\s+1\/1\s+Running/m.test(out), { timeoutMs: 30_000 });
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  void it('deletes a pod with --grace-period=0 --force, sending gracePeriodSeconds 0', async () => {
    assert.match((await kubectl('delete', 'pod', 'web', '--wait=false')).stdout, /pod "web" deleted/);
    assert.match((await kubectl('get', 'pods')).stdout, /^web\s+1\/1\s+Terminating/m, 'a bound pod is kept for its grace period');
    const forced = await kubectl('delete', 'pod', 'web', '--grace-period=0', '--force', '-v=8');
    assert.match(forced.stdout, /pod "web" force deleted/);
    assert.match(forced.stderr, /Request Body: \{"gracePeriodSeconds":0,"propagationPolicy":"Background"\}/);
    assert.equal((await server.client.request('GET', '/api/v1/namespaces/default/pods/web')).status, 404);
  });

  void it('creates and lists configmaps, secrets, serviceaccounts and leases', async () => {
    assert.match((await kubectl('create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=2')).stdout, /configmap\/cfg created/);
    assert.match((await kubectl('create', 'secret', 'generic', 'sec', '--from-literal=password=s3cret')).stdout, /secret\/sec created/);
    assert.match((await kubectl('create', 'serviceaccount', 'builder')).stdout, /serviceaccount\/builder created/);
    const listed = (await kubectl('get', 'cm,secrets,sa')).stdout;
    assert.match(listed, /^configmap\/cfg\s+2\s+/m);
    assert.match(listed, /^secret\/sec\s+Opaque\s+1\s+/m);
    assert.match(listed, /^serviceaccount\/builder\s+0\s+/m);
    const decoded = (await kubectl('get', 'secret', 'sec', '-o', 'jsonpath={.data.password}')).stdout;
    assert.equal(Buffer.from(decoded, 'base64').toString('utf8'), 's3cret');
    await server.client.request('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', {
      body: { metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 } },
    });
    assert.match((await kubectl('get', 'leases', '-n', 'orch-node-lease')).stdout, /^NAME\s+HOLDER\s+AGE\nn1\s+n1\s+/m);
  });

  void it('approves and denies CSRs with kubectl certificate, and lists them', async () => {
    const { requestPem } = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    for (const name of ['node-csr-a', 'node-csr-b']) {
      const created = await server.client.request('POST', '/apis/certificates.orch.io/v1/certificatesigningrequests', {
        body: v1Csr(name, requestPem, 'orch.io/kube-apiserver-client-nodeagent', ['digital signature', 'client auth'], { expirationSeconds: 86400 }),
      });
      assert.equal(created.status, 201, created.text);
    }
    const pending = (await kubectl('get', 'csr')).stdout;
    assert.match(pending, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/m);
    assert.match(pending, /^node-csr-a\s+\S+\s+orch\.io\/kube-apiserver-client-nodeagent\s+admin\s+24h\s+Pending$/m);
    assert.match((await kubectl('certificate', 'approve', 'node-csr-a')).stdout, /certificatesigningrequest\.certificates\.k8s\.io\/node-csr-a approved/);
    assert.match((await kubectl('certificate', 'deny', 'node-csr-b')).stdout, /certificatesigningrequest\.certificates\.k8s\.io\/node-csr-b denied/);
    await waitFor('kubectl get csr to show the issued certificate', async () => /^node-csr-a\s.*Approved,Issued$/m.test((await kubectl('get', 'csr')).stdout), { timeoutMs: 30_000 });
    assert.match((await kubectl('get', 'csr', 'node-csr-b')).stdout, /Denied$/m);
    const pem = Buffer.from((await kubectl('get', 'csr', 'node-csr-a', '-o', 'jsonpath={.status.certificate}')).stdout, 'base64').toString('utf8');
    assert.match(pem, /^-----BEGIN CERTIFICATE-----/);
  });

  void it('describes, patches and deletes each kind', async () => {
    const kinds: [string, string, ...string[]][] = [
      ['configmap', 'cfg'], ['secret', 'sec'], ['serviceaccount', 'builder'], ['lease', 'n1', '-n', 'orch-node-lease'], ['csr', 'node-csr-a'], ['node', 'n1'],
    ];
    for (const [kind, name, ...scope] of kinds) {
      assert.match((await kubectl('describe', kind, name, ...scope)).stdout, new RegExp(`^Name:\\s+${name}$`, 'm'), kind);
      assert.match((await kubectl('patch', kind, name, ...scope, '-p', '{"metadata":{"labels":{"patched":"yes"}}}')).stdout, / patched$/m, kind);
      assert.match((await kubectl('get', kind, '-l', 'patched=yes', ...scope, '-o', 'name')).stdout, new RegExp(`/${name}$`, 'm'), kind);
      assert.match((await kubectl('delete', kind, name, ...scope)).stdout, / deleted$/m, kind);
    }
  });

  void it('answers kubectl auth can-i for the admin and for a user the policy does not allow', async () => {
    assert.equal((await kubectl('auth', 'can-i', 'create', 'pods')).stdout.trim(), 'yes');
    assert.equal((await kubectl('auth', 'can-i', 'update', 'nodes/status')).stdout.trim(), 'yes');
    const admin = parse(readFileSync(server.adminKubeconfig, 'utf8')) as Obj;
    const cluster = ((admin.clusters as Obj[])[0] as Obj).cluster as Obj;
    const bobConfig = join(server.dir, 'bob.orchconfig');
    writeFileSync(bobConfig, stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'bob',
      clusters: [{ name: 'orch', cluster }], users: [{ name: 'bob', user: { token: BOB } }], contexts: [{ name: 'bob', context: { cluster: 'orch', user: 'bob' } }],
    }));
    const asBob = (...args: string[]): Promise<{ stdout: string; stderr: string }> => runKubectl(server, args, { KUBECONFIG: bobConfig });
    assert.equal((await asBob('auth', 'can-i', 'get', 'pods')).stdout.trim(), 'yes');
    await assert.rejects(asBob('auth', 'can-i', 'delete', 'pods'), /exit code 1|Command failed/);
    await assert.rejects(asBob('get', 'nodes'), /nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope/);
  });
});

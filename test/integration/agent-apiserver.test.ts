/**
 * API-server mode end to end: a real containerd, a real orch-apiserver (SQLite) and the real
 * nodeagent binary bootstrapping its client certificate from a bootstrap token (the CSR approved
 * as `kubectl certificate approve` does). Shows the node registering with its status and a
 * renewing lease; a pod created with kubectl running, its status and events through kubectl;
 * `kubectl logs` and `kubectl exec` through the API server and the agent's secure port (client
 * certificate, SubjectAccessReview); graceful deletion; a mirror pod for a static pod, made again
 * when deleted; and pods left untouched while the API server is down for 60 s, with the status
 * caught up afterwards.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { ensureCa, issueClientCertificate } from '../../src/apiserver/server/index.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { mkdir } from 'node:fs/promises';
import { freePort, startContainerd, startRegistry, type ContainerdInstance, type RegistryInstance } from '../helpers/containerd.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

const execFileP = promisify(execFile);
const BOOTSTRAP_TOKEN = 'abcdef.0123456789abcdef';
let containerd: ContainerdInstance;
let cri: CriClient;
let server: ApiServer;
let agent: AgentProcess | undefined;
let dir: string;
let manifests: string;
let registry: RegistryInstance | undefined;

const kubectl = async (...args: string[]): Promise<string> => (await runKubectl(server, args)).stdout;
const getJson = async <T>(path: string): Promise<T | undefined> => {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body as T) : undefined;
};

function apiPod(name: string, command: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE, terminationGracePeriodSeconds: 5, restartPolicy: 'Always',
      containers: [{ name: 'main', image: containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', command] }],
      ...extra,
    },
  };
}

async function createPod(body: Record<string, unknown>): Promise<void> {
  const file = join(dir, `${(body.metadata as { name: string }).name}.json`);
  await writeFile(file, JSON.stringify(body));
  await kubectl('create', '-f', file);
}

/** The running `main` container of an API pod (named as in the API server, no node suffix). */
async function apiContainer(name: string): Promise<{ id: string } | undefined> {
  const list = await cri.listContainers({ labelSelector: { 'io.orch.pod.name': name, 'io.orch.container.name': 'main' } });
  return list.find((c) => c.state === 'CONTAINER_RUNNING');
}

async function podPhase(name: string): Promise<string | undefined> {
  return (await getJson<Pod>(`/api/v1/namespaces/default/pods/${name}`))?.status?.phase;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-apiserver-'));
  manifests = await mkdtemp(join(tmpdir(), 'agent-apiserver-manifests-'));
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  // The API server's client certificate toward node agents, from a CA the agent trusts.
  const ca = await ensureCa(join(dir, 'clients-ca'));
  const client = await issueClientCertificate(ca, 'orch-apiserver-nodeagent-client', ['system:masters']);
  await writeFile(join(dir, 'proxy.crt'), client.certPem);
  await writeFile(join(dir, 'proxy.key'), client.keyPem);
  server = await startApiServer({
    storage: 'sqlite',
    tokens: [{ token: BOOTSTRAP_TOKEN, user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] }],
    args: [`--nodeagent-client-certificate=${join(dir, 'proxy.crt')}`, `--nodeagent-client-key=${join(dir, 'proxy.key')}`],
  });
  await writeFile(join(dir, 'bootstrap.orchconfig'), JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'boot',
    clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority': server.caFile } }],
    users: [{ name: 'u', user: { token: BOOTSTRAP_TOKEN } }],
    contexts: [{ name: 'boot', context: { cluster: 'c', user: 'u' } }],
  }));
  await writeManifest(manifests, 'static.yaml', podManifest({ name: 'static', image: containerd.images.busybox, hostNetwork: true, command: 'exec sleep 3600' }));
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir: join(dir, 'root'),
    noWait: true,
    args: [
      `--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`,
      `--bootstrap-orchconfig=${join(dir, 'bootstrap.orchconfig')}`, `--orchconfig=${join(dir, 'node.orchconfig')}`,
      `--client-ca-file=${join(dir, 'clients-ca', 'ca.crt')}`, '--anonymous-auth=false', '--authorization-mode=Webhook',
      '--node-status-update-frequency=2s',
    ],
  });
  // Approve the node's CSR as an administrator does.
  const csr = await waitFor('the node CSR', async () => {
    const list = await getJson<{ items: { metadata: { name: string }; spec: { username?: string } }[] }>('/apis/certificates.orch.io/v1/certificatesigningrequests');
    return list?.items[0];
  }, { timeoutMs: 30_000 });
  assert.equal(csr.spec.username, 'system:bootstrap:abcdef');
  await kubectl('certificate', 'approve', csr.metadata.name);
  await agent.waitForLog('nodeagent running', 60_000);
});

after(async () => {
  await agent?.stop();
  await registry?.stop();
  cri.close();
  await server.stop();
  await containerd.stop();
  // The agent leaves its pods' mounts (secret tmpfs) when it stops, as upstream does.
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const mounted = mountinfo.split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${dir}/`));
  for (const m of mounted.reverse()) await execFileP('umount', ['-l', m]);
  await rm(dir, { recursive: true, force: true });
  await rm(manifests, { recursive: true, force: true });
});

void describe('the agent with the API server', () => {
  void it('registers the node, Ready with its capacity and info, and renews its lease', async () => {
    const node = await waitFor('the node Ready', async () => {
      const n = await getJson<Node>(`/api/v1/nodes/${NODE}`);
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(node.metadata?.labels?.['orch.io/hostname'], NODE);
    assert.ok(node.status?.capacity?.cpu !== undefined && node.status.capacity.memory !== undefined);
    assert.ok(node.status.allocatable?.pods === '110');
    assert.deepEqual(node.status.addresses?.find((a) => a.type === 'InternalIP'), { type: 'InternalIP', address: '127.0.0.1' });
    assert.match(await kubectl('get', 'nodes'), new RegExp(`${NODE}\\s+Ready`));
    const leasePath = `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${NODE}`;
    const first = await waitFor('the lease', () => getJson<{ spec: { renewTime: string; holderIdentity: string } }>(leasePath), { timeoutMs: 30_000 });
    assert.equal(first.spec.holderIdentity, NODE);
    await waitFor('the lease renewed', async () => (await getJson<{ spec: { renewTime: string } }>(leasePath))?.spec.renewTime !== first.spec.renewTime, { timeoutMs: 30_000 });
  });

  void it('runs a pod created with kubectl; status, events, logs and exec through kubectl', async () => {
    await createPod(apiPod('web', 'echo hello from web; exec sleep 3600'));
    await waitFor('the web pod Running in the API server', async () => (await podPhase('web')) === 'Running', { timeoutMs: 60_000 });
    assert.match(await kubectl('get', 'pod', 'web'), /web\s+1\/1\s+Running/);
    await waitFor('the pod events', async () => {
      const events = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=web');
      return /Started/.test(events) && /Pulled/.test(events) && /Created/.test(events);
    }, { timeoutMs: 30_000 });
    await waitFor('kubectl logs', async () => (await kubectl('logs', 'web')).includes('hello from web'), { timeoutMs: 30_000 });
    assert.equal((await kubectl('exec', 'web', '--', 'sh', '-c', 'echo exec-ok $((40+2))')).trim(), 'exec-ok 42');
  });

  void it('fails pods the node refuses at admission with the upstream reason', async () => {
    await createPod(apiPod('picky', 'exec sleep 3600', { nodeSelector: { disk: 'none-here' } }));
    await createPod(apiPod('greedy', 'exec sleep 3600', { containers: [{ name: 'main', image: containerd.images.busybox, command: ['sleep', '3600'], resources: { requests: { cpu: '500' } } }] }));
    const reasonOf = async (name: string): Promise<string | undefined> => {
      const pod = await getJson<Pod>(`/api/v1/namespaces/default/pods/${name}`);
      return pod?.status?.phase === 'Failed' ? pod.status.reason : undefined;
    };
    assert.equal(await waitFor('picky refused', () => reasonOf('picky'), { timeoutMs: 30_000 }), 'NodeAffinity');
    assert.equal(await waitFor('greedy refused', () => reasonOf('greedy'), { timeoutMs: 30_000 }), 'OutOfcpu');
    assert.equal(await apiContainer('picky'), undefined);
    await kubectl('delete', 'pod', 'picky', 'greedy', '--wait=false');
    await waitFor('the refused pods deleted', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/picky')) === undefined && (await getJson<Pod>('/api/v1/namespaces/default/pods/greedy')) === undefined, { timeoutMs: 30_000 });
  });

  void it('pulls with imagePullSecrets from an authenticating registry, and serves configMap and secret volumes with updates', async () => {
    registry = await startRegistry({ auth: 'puller:pull-pass' });
    // containerd reaches that registry over plain HTTP.
    await mkdir(join(containerd.dir, 'certs.d', registry.host), { recursive: true });
    await writeFile(join(containerd.dir, 'certs.d', registry.host, 'hosts.toml'), `server = "http://${registry.host}"\n[host."http://${registry.host}"]\n  capabilities = ["pull", "resolve"]\n`);
    const b64 = (t: string): string => Buffer.from(t).toString('base64');
    const post = async (path: string, body: unknown): Promise<void> => {
      const res = await server.client.request('POST', path, { body });
      assert.equal(res.status, 201, res.text);
    };
    await post('/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'regcred' }, type: 'orch.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { [registry.host]: { auth: b64('puller:pull-pass') } } })) },
    });
    await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { greeting: 'hello' } });
    await post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, data: { token: b64('t0p-secret') } });
    const withImage = (name: string, secrets: boolean): Record<string, unknown> => {
      const body = apiPod(name, 'echo "$(cat /cfg/greeting) $(cat /sec/token)"; exec sleep 3600', {
        ...(secrets ? { imagePullSecrets: [{ name: 'regcred' }] } : {}),
        volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }, { name: 'sec', secret: { secretName: 'sec' } }],
      });
      const spec = body.spec as { containers: Record<string, unknown>[] };
      spec.containers = [{ ...spec.containers[0], image: registry?.images.busybox, imagePullPolicy: 'Always', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }, { name: 'sec', mountPath: '/sec' }] }];
      return body;
    };
    await createPod(withImage('vols', true));
    await createPod(withImage('nocreds', false));
    await waitFor('the vols pod Running', async () => (await podPhase('vols')) === 'Running', { timeoutMs: 60_000 });
    await waitFor('the volume contents in the logs', async () => (await kubectl('logs', 'vols')).includes('hello t0p-secret'), { timeoutMs: 30_000 });
    await waitFor('the pull without credentials refused (ErrImagePull or ImagePullBackOff)', async () => {
      const pod = await getJson<Pod>('/api/v1/namespaces/default/pods/nocreds');
      const reason = pod?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff';
    }, { timeoutMs: 60_000 });
    const res = await server.client.request('PATCH', '/api/v1/namespaces/default/configmaps/cfg', { body: { data: { greeting: 'bonjour' } }, contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    await waitFor('the configMap update in the volume', async () => (await kubectl('exec', 'vols', '--', 'cat', '/cfg/greeting')).trim() === 'bonjour', { timeoutMs: 60_000 });
    await createPod(apiPod('nomount', 'exec sleep 3600', { volumes: [{ name: 'cfg', configMap: { name: 'missing' } }] }));
    await waitFor('a FailedMount event for the missing configMap', async () =>
      /FailedMount.*missing/.test(await kubectl('get', 'events', '--field-selector', 'involvedObject.name=nomount')), { timeoutMs: 30_000 });
    await kubectl('delete', 'pod', 'vols', 'nocreds', 'nomount', '--wait=false');
  });

  void it('deletes a pod gracefully: the containers stop, then the pod leaves the API server', async () => {
    await createPod(apiPod('gone', 'trap "exit 0" TERM; while true; do sleep 0.2; done'));
    await waitFor('the gone pod Running', async () => (await podPhase('gone')) === 'Running', { timeoutMs: 60_000 });
    assert.ok(await apiContainer('gone'), 'the container runs before the deletion');
    await kubectl('delete', 'pod', 'gone', '--wait=false');
    await waitFor('the pod removed from the API server', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/gone')) === undefined, { timeoutMs: 30_000 });
    assert.equal(await apiContainer('gone'), undefined);
  });

  void it('keeps a mirror pod for a static pod and makes it again when deleted', async () => {
    const name = `static-${NODE}`;
    const mirror = await waitFor('the mirror pod', () => getJson<Pod>(`/api/v1/namespaces/default/pods/${name}`), { timeoutMs: 60_000 });
    assert.ok(mirror.metadata?.annotations?.['orch.io/config.mirror'] !== undefined);
    assert.equal(mirror.metadata.ownerReferences?.[0]?.kind, 'Node');
    await waitFor('the mirror pod Running', async () => (await podPhase(name)) === 'Running', { timeoutMs: 30_000 });
    await kubectl('delete', 'pod', name, '--wait=false');
    await waitFor('the mirror pod made again', async () => {
      const again = await getJson<Pod>(`/api/v1/namespaces/default/pods/${name}`);
      return again !== undefined && again.metadata?.uid !== mirror.metadata?.uid && again.metadata?.deletionTimestamp === undefined;
    }, { timeoutMs: 30_000 });
    assert.ok(await runningContainer(cri, 'static'), 'the static pod kept running');
  });

  void it('keeps pods running while the API server is down for 60 s, then catches the status up', async () => {
    await createPod(apiPod('steady', 'exec sleep 3600'));
    await createPod(apiPod('finisher', 'sleep 20; exit 0', { restartPolicy: 'Never' }));
    await waitFor('both pods Running', async () => (await podPhase('steady')) === 'Running' && (await podPhase('finisher')) === 'Running', { timeoutMs: 60_000 });
    const before = await apiContainer('steady');
    assert.ok(before);
    await server.pause();
    const downSince = Date.now();
    // Poll the runtime through the outage: the container never changes.
    await waitFor('60 s with the API server down', async () => {
      const now = await apiContainer('steady');
      assert.equal(now?.id, before.id, 'the running container was touched while the API server was down');
      return Date.now() - downSince >= 60_000;
    }, { timeoutMs: 90_000, intervalMs: 1000 });
    await server.resume();
    await waitFor('the finished pod Succeeded in the API server', async () => (await podPhase('finisher')) === 'Succeeded', { timeoutMs: 60_000 });
    assert.equal(await podPhase('steady'), 'Running');
    assert.equal((await apiContainer('steady'))?.id, before.id);
  });
});

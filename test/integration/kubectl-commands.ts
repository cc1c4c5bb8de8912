/**
 * The everyday kubectl commands that kubectl-versions.test.ts runs with every kubectl version,
 * each a named step that checks what the command did (not only that it exited 0). Names are
 * suffixed with the version (`cm-127`) so that the versions share one cluster.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiServer } from '../helpers/apiserver.js';
import { makeCsr, v1Csr } from '../helpers/apiserver.js';
import { freePort } from '../helpers/containerd.js';
import { kubectl, startKubectl, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

export interface StepContext {
  readonly env: KubectlEnv;
  /** 127 for kubectl 1.27: the suffix of this version's objects. */
  readonly tag: string;
  readonly server: ApiServer;
  readonly node: string;
  readonly dir: string;
  /** Creates a pod on the node from a JSON body and waits until it runs. */
  readonly runPod: (body: Record<string, unknown>) => Promise<void>;
  readonly busybox: string;
}

export interface Step {
  readonly name: string;
  run(c: StepContext): Promise<void>;
}

const k = (c: StepContext, ...args: string[]): Promise<string> => kubectl(c.env, args).then((r) => r.stdout);

function httpGet(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => { resolve(body); });
    });
    req.on('timeout', () => { req.destroy(new Error('timeout')); });
    req.on('error', reject);
    req.end();
  });
}

async function json(c: StepContext, path: string): Promise<Record<string, unknown>> {
  const res = await c.server.client.request('GET', path);
  assert.equal(res.status, 200, `GET ${path}: ${res.text}`);
  return res.body;
}

const data = (o: Record<string, unknown>): Record<string, string> => (o.data ?? {}) as Record<string, string>;

export const STEPS: readonly Step[] = [
  { name: 'create configmap', run: async (c) => {
    await k(c, 'create', 'configmap', `cm-${c.tag}`, '--from-literal=a=b');
    assert.deepEqual(data(await json(c, `/api/v1/namespaces/default/configmaps/cm-${c.tag}`)), { a: 'b' });
  } },
  { name: 'create secret', run: async (c) => {
    await k(c, 'create', 'secret', 'generic', `s-${c.tag}`, '--from-literal=pass=word');
    assert.equal(data(await json(c, `/api/v1/namespaces/default/secrets/s-${c.tag}`)).pass, Buffer.from('word').toString('base64'));
  } },
  { name: 'create namespace', run: async (c) => {
    await k(c, 'create', 'namespace', `ns-${c.tag}`);
    await json(c, `/api/v1/namespaces/ns-${c.tag}`);
  } },
  { name: 'create serviceaccount', run: async (c) => {
    await k(c, 'create', 'serviceaccount', `sa-${c.tag}`, '-n', `ns-${c.tag}`);
    await json(c, `/api/v1/namespaces/ns-${c.tag}/serviceaccounts/sa-${c.tag}`);
  } },
  { name: 'create -f', run: async (c) => {
    const file = join(c.dir, `created-${c.tag}.yaml`);
    await writeFile(file, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: created-${c.tag}}\ndata: {from: file}\n`);
    await k(c, 'create', '-f', file);
    assert.deepEqual(data(await json(c, `/api/v1/namespaces/default/configmaps/created-${c.tag}`)), { from: 'file' });
  } },
  { name: 'apply twice', run: async (c) => {
    const file = join(c.dir, `applied-${c.tag}.yaml`);
    await writeFile(file, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied-${c.tag}}\ndata: {round: one}\n`);
    await k(c, 'apply', '-f', file);
    await writeFile(file, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied-${c.tag}}\ndata: {round: two}\n`);
    assert.match(await k(c, 'apply', '-f', file), /configured/);
    assert.deepEqual(data(await json(c, `/api/v1/namespaces/default/configmaps/applied-${c.tag}`)), { round: 'two' });
  } },
  { name: 'patch', run: async (c) => {
    await k(c, 'patch', 'configmap', `cm-${c.tag}`, '-p', '{"data":{"patched":"yes"}}');
    assert.equal(data(await json(c, `/api/v1/namespaces/default/configmaps/cm-${c.tag}`)).patched, 'yes');
  } },
  { name: 'label', run: async (c) => {
    await k(c, 'label', 'configmap', `cm-${c.tag}`, 'tier=test');
    assert.match(await k(c, 'get', 'configmaps', '-l', 'tier=test', '-o', 'name'), new RegExp(`configmap/cm-${c.tag}`));
  } },
  { name: 'get -o yaml', run: async (c) => {
    const yaml = await k(c, 'get', 'configmap', `cm-${c.tag}`, '-o', 'yaml');
    assert.match(yaml, new RegExp(`^  name: cm-${c.tag}$`, 'm'));
    assert.match(yaml, /^ {2}patched: "yes"$/m);
  } },
  { name: 'get -o json', run: async (c) => {
    const pod = JSON.parse(await k(c, 'get', 'pod', 'web', '-o', 'json')) as { spec: { nodeName: string }; status: { phase: string } };
    assert.deepEqual([pod.spec.nodeName, pod.status.phase], [c.node, 'Running']);
  } },
  { name: 'get -o wide', run: async (c) => {
    assert.match(await k(c, 'get', 'pods', '-o', 'wide'), new RegExp(`web\\s+2/2\\s+Running\\s+\\d+\\s+\\S+\\s+[\\d.]+\\s+${c.node}`));
  } },
  { name: 'describe', run: async (c) => {
    const text = await k(c, 'describe', 'pod', 'web');
    assert.match(text, new RegExp(`Node:\\s+${c.node}/127\\.0\\.0\\.1`));
    assert.match(text, /Containers:[\s\S]*main:[\s\S]*http:/);
    assert.match(await k(c, 'describe', 'node', c.node), /Non-terminated Pods:/);
  } },
  { name: 'logs', run: async (c) => {
    assert.match(await k(c, 'logs', 'web', '-c', 'main', '--tail=3'), /tick \d+/);
  } },
  { name: 'logs -f', run: async (c) => {
    const follow = startKubectl(c.env, ['logs', '-f', 'web', '-c', 'main', '--tail=1']);
    try {
      // A second line arrives while kubectl keeps following (the container ticks every second).
      await waitFor('kubectl logs -f to show new lines', () => (follow.output().match(/tick \d+/g) ?? []).length >= 2 && follow.child.exitCode === null, { timeoutMs: 20_000 });
    } finally {
      await follow.stop();
    }
  } },
  { name: 'logs --previous', run: async (c) => {
    assert.match(await k(c, 'logs', 'crashy', '--previous'), /first run/);
  } },
  { name: 'exec -i with piped stdin', run: async (c) => {
    const text = `piped through kubectl ${c.tag}\nsecond line\n`;
    const run = await kubectl(c.env, ['exec', '-v=6', '-i', 'web', '-c', 'main', '--', 'cat'], { stdin: text, timeoutMs: 30_000 });
    assert.equal(run.stdout, text);
    // kubectl falls back to SPDY silently when its WebSocket is refused: it must not have to.
    assert.doesNotMatch(run.stderr, /fallback to secondary dialer/);
  } },
  { name: 'exec -it with a terminal size', run: async (c) => {
    const command = `stty cols 91 rows 37; ${c.env.binary} exec -it web -c main -- sh -c 'sleep 1; stty size'`;
    const out = await new Promise<string>((resolve, reject) => {
      execFile('script', ['-qec', command, '/dev/null'], { env: { ...process.env, HOME: c.env.home, KUBECONFIG: c.env.kubeconfig }, timeout: 30_000 }, (err, stdout) => {
        if (err !== null) reject(new Error(`script: ${err.message}`));
        else resolve(stdout);
      });
    });
    assert.match(out, /37 91/);
  } },
  { name: 'cp both ways', run: async (c) => {
    const local = join(c.dir, `up-${c.tag}.txt`);
    const back = join(c.dir, `back-${c.tag}.txt`);
    const content = `copied by kubectl ${c.tag}\n${'x'.repeat(100_000)}\n`;
    await writeFile(local, content);
    await kubectl(c.env, ['cp', local, `web:/tmp/up-${c.tag}.txt`, '-c', 'main'], { timeoutMs: 30_000 });
    await kubectl(c.env, ['cp', `web:/tmp/up-${c.tag}.txt`, back, '-c', 'main'], { timeoutMs: 30_000 });
    assert.equal(await readFile(back, 'utf8'), content);
  } },
  { name: 'port-forward', run: async (c) => {
    const [a, b] = [await freePort(), await freePort()];
    const forward = startKubectl(c.env, ['port-forward', '-v=6', 'pod/web', `${a}:8080`, `${b}:8080`]);
    try {
      await waitFor('kubectl port-forward to listen', () => forward.output().includes(`Forwarding from 127.0.0.1:${b}`), { timeoutMs: 20_000 });
      const answers = await Promise.all([httpGet(a), httpGet(b), httpGet(a), httpGet(b)]);
      assert.deepEqual(answers, Array(4).fill('hello from web\n'));
      // 1.31+ tunnels SPDY in a WebSocket, and would fall back to SPDY silently if refused.
      assert.doesNotMatch(forward.output(), /fallback to secondary dialer/);
    } finally {
      await forward.stop();
    }
  } },
  { name: 'port-forward to a closed port', run: async (c) => {
    const port = await freePort();
    const forward = startKubectl(c.env, ['port-forward', 'pod/web', `${port}:9999`]);
    try {
      await waitFor('kubectl port-forward to listen', () => forward.output().includes('Forwarding from'), { timeoutMs: 20_000 });
      await httpGet(port).then(() => undefined, () => undefined);
      await waitFor('the error of the closed port', () => /error forwarding port 9999 to pod .*connection refused/.test(forward.output()), { timeoutMs: 20_000 });
    } finally {
      await forward.stop();
    }
  } },
  { name: 'top node', run: async (c) => {
    // Node usage is a rate of two scrapes of the agent (as metrics-server's): wait for them.
    const out = await waitFor('kubectl top node', () => k(c, 'top', 'node').catch(() => undefined), { timeoutMs: 60_000, intervalMs: 1000 });
    assert.match(out, new RegExp(`${c.node}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`));
  } },
  { name: 'top pod', run: async (c) => {
    const out = await waitFor('kubectl top pod', () => k(c, 'top', 'pod', 'web', '--containers').catch(() => undefined), { timeoutMs: 60_000, intervalMs: 1000 });
    assert.match(out, /web\s+main\s+\d+m\s+\d+Mi/);
  } },
  { name: 'drain and uncordon', run: async (c) => {
    await c.runPod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `evictee-${c.tag}`, labels: { app: `evictee-${c.tag}` } },
      spec: { nodeName: c.node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: c.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] } });
    const out = await kubectl(c.env, ['drain', c.node, `--pod-selector=app=evictee-${c.tag}`, '--force', '--ignore-daemonsets', '--timeout=60s'], { timeoutMs: 90_000 });
    assert.match(out.stdout + out.stderr, new RegExp(`evicting pod default/evictee-${c.tag}[\\s\\S]*node/${c.node} drained`));
    assert.equal(((await json(c, `/api/v1/nodes/${c.node}`)).spec as { unschedulable?: boolean }).unschedulable, true);
    assert.equal((await c.server.client.request('GET', `/api/v1/namespaces/default/pods/evictee-${c.tag}`)).status, 404);
    await k(c, 'uncordon', c.node);
    assert.equal(((await json(c, `/api/v1/nodes/${c.node}`)).spec as { unschedulable?: boolean }).unschedulable, undefined);
  } },
  { name: 'auth can-i', run: async (c) => {
    assert.equal((await k(c, 'auth', 'can-i', 'create', 'pods')).trim(), 'yes');
    assert.match(await k(c, 'auth', 'can-i', '--list'), /\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/);
  } },
  { name: 'auth whoami', run: async (c) => {
    assert.match(await k(c, 'auth', 'whoami'), /Username\s+admin[\s\S]*Groups\s+\[system:masters system:authenticated\]/);
  } },
  { name: 'certificate approve', run: async (c) => {
    const { requestPem } = await makeCsr({ commonName: `user-${c.tag}` });
    const res = await c.server.client.request('POST', '/apis/certificates.orch.io/v1/certificatesigningrequests', {
      body: v1Csr(`csr-${c.tag}`, requestPem, 'orch.io/kube-apiserver-client', ['client auth']),
    });
    assert.equal(res.status, 201, res.text);
    await k(c, 'certificate', 'approve', `csr-${c.tag}`);
    await waitFor('the certificate issued', async () => {
      const status = (await json(c, `/apis/certificates.orch.io/v1/certificatesigningrequests/csr-${c.tag}`)).status as { certificate?: string } | undefined;
      return status?.certificate !== undefined;
    }, { timeoutMs: 20_000 });
  } },
  { name: 'delete --wait', run: async (c) => {
    await k(c, 'delete', 'configmap', `applied-${c.tag}`, `created-${c.tag}`, '--wait');
    await kubectl(c.env, ['delete', 'namespace', `ns-${c.tag}`, '--wait', '--timeout=60s'], { timeoutMs: 90_000 });
    assert.equal((await c.server.client.request('GET', `/api/v1/namespaces/ns-${c.tag}`)).status, 404);
    assert.equal((await c.server.client.request('GET', `/api/v1/namespaces/default/configmaps/applied-${c.tag}`)).status, 404);
  } },
  { name: 'events', run: async (c) => {
    assert.match(await k(c, 'events', '--for', 'pod/web'), /Started\s+Pod\/web/);
  } },
];

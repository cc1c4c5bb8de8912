/**
 * @kubernetes/client-node (the JavaScript client library, major 1: the one that runs on Node 20)
 * against orch-apiserver and a real node agent on a real containerd: create, get, list, replace,
 * patch and delete of a ConfigMap; a pod created and watched until it runs; its logs; exec with
 * stdin that reaches end-of-file; port-forward; the metrics API; the pod's graceful deletion
 * seen on the watch.
 */
/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment, @typescript-eslint/no-misused-spread --
   the library's generated types are classes of plain data, and its documentation passes object literals. */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, Exec, KubeConfig, Log, Metrics, PatchStrategy, PortForward, setHeaderOptions, Watch, type V1Pod, type V1Status } from '@kubernetes/client-node';
import { finished } from 'node:stream/promises';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/wait.js';

let cluster: Cluster;
let kc: KubeConfig;
let core: CoreV1Api;
const seen: { phase: string; pod: V1Pod }[] = [];
let stopWatch: AbortController | undefined;

before(async () => {
  cluster = await startCluster({ node: 'node-js' });
  kc = new KubeConfig();
  kc.loadFromFile(cluster.server.adminKubeconfig);
  core = kc.makeApiClient(CoreV1Api);
});

after(async () => {
  stopWatch?.abort();
  await cluster.stop();
});

function collect(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => { text += d.toString(); });
  return { stream, text: () => text };
}

void describe('@kubernetes/client-node against orch-apiserver', () => {
  void it('creates, reads, lists, replaces, patches and deletes a ConfigMap', { timeout: 120_000 }, async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'js', labels: { from: 'js' } }, data: { a: '1' } } });
    assert.equal(created.metadata?.uid !== undefined, true);
    assert.deepEqual((await core.readNamespacedConfigMap({ name: 'js', namespace: 'default' })).data, { a: '1' });
    const list = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'from=js' });
    assert.deepEqual(list.items.map((c) => c.metadata?.name), ['js']);
    const replaced = await core.replaceNamespacedConfigMap({ name: 'js', namespace: 'default', body: { ...created, data: { a: '2' } } });
    assert.deepEqual(replaced.data, { a: '2' });
    const patched = await core.patchNamespacedConfigMap({ name: 'js', namespace: 'default', body: { data: { b: '3' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    assert.deepEqual(patched.data, { a: '2', b: '3' });
    await core.deleteNamespacedConfigMap({ name: 'js', namespace: 'default' });
    await assert.rejects(core.readNamespacedConfigMap({ name: 'js', namespace: 'default' }), (err: unknown) => (err as { code?: number }).code === 404);
  });

  void it('runs a pod, watched until it is Running, with its logs', { timeout: 120_000 }, async () => {
    stopWatch = await new Watch(kc).watch('/api/v1/namespaces/default/pods', {}, (phase, pod: V1Pod) => {
      seen.push({ phase, pod });
    }, () => undefined);
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'js-web' },
        spec: {
          nodeName: cluster.node, terminationGracePeriodSeconds: 1,
          containers: [
            { name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo hello from js; exec sleep 3600'] },
            { name: 'http', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'mkdir -p /w && echo forwarded > /w/index.html && exec httpd -f -p 8080 -h /w'] },
          ],
        },
      },
    });
    await waitFor('the watch to show js-web Running', () => seen.some((e) => e.pod.metadata?.name === 'js-web' && e.pod.status?.phase === 'Running'), { timeoutMs: 60_000 });
    assert.equal(seen.find((e) => e.pod.metadata?.name === 'js-web')?.phase, 'ADDED');
    assert.equal(await waitFor('the log', async () => {
      const text = await core.readNamespacedPodLog({ name: 'js-web', namespace: 'default', container: 'main' });
      return text.includes('hello from js') ? text : undefined;
    }, { timeoutMs: 30_000 }), 'hello from js\n');
    const out = collect();
    // The streaming reader: it pipes the body into the stream, which ends with the log.
    await new Log(kc).log('default', 'js-web', 'main', out.stream, { follow: false });
    await finished(out.stream);
    assert.equal(out.text(), 'hello from js\n');
  });

  void it('execs with stdin that ends, and reads the exit status', { timeout: 120_000 }, async () => {
    const stdout = collect();
    const stderr = collect();
    const status = await new Promise<V1Status>((resolve, reject) => {
      new Exec(kc).exec('default', 'js-web', 'main', ['sh', '-c', 'cat; echo done >&2; exit 3'], stdout.stream, stderr.stream, Readable.from(['from the client\n']), false, resolve)
        .catch(reject);
    });
    assert.equal(stdout.text(), 'from the client\n');
    assert.equal(stderr.text(), 'done\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message, '3');
  });

  void it('forwards a port', { timeout: 120_000 }, async () => {
    const forward = new PortForward(kc);
    const server = createServer((socket: Socket) => {
      void forward.portForward('default', 'js-web', [8080], socket, null, socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => { text += d.toString(); });
          res.on('end', () => { resolve(text); });
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(body, 'forwarded\n');
    } finally {
      server.close();
    }
  });

  void it('reads node and pod metrics', { timeout: 120_000 }, async () => {
    const metrics = new Metrics(kc);
    const nodes = await waitFor('node metrics', async () => {
      const list = await metrics.getNodeMetrics();
      return list.items.length > 0 ? list : undefined;
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    const first = nodes.items[0];
    assert.ok(first !== undefined);
    assert.equal(first.metadata.name, cluster.node);
    assert.match(first.usage.memory, /^\d+Ki$/);
    const pods = await metrics.getPodMetrics('default');
    assert.deepEqual(pods.items.find((p) => p.metadata.name === 'js-web')?.containers.map((c) => c.name), ['http', 'main']);
  });

  void it('deletes the pod gracefully: the watch sees it go', { timeout: 120_000 }, async () => {
    await core.deleteNamespacedPod({ name: 'js-web', namespace: 'default' });
    await waitFor('the DELETED event', () => seen.some((e) => e.phase === 'DELETED' && e.pod.metadata?.name === 'js-web'), { timeoutMs: 60_000 });
    assert.ok(seen.some((e) => e.phase === 'MODIFIED' && e.pod.metadata?.deletionTimestamp !== undefined), 'marked for deletion first');
  });
});

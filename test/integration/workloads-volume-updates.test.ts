/**
 * ConfigMap updates reaching a running pod's volumes under each
 * configMapAndSecretChangeDetectionStrategy, through the binaries and the stock kubectl: a pod
 * with two configMap volumes on a node agent that syncs every 5 s, one ConfigMap changed with
 * `kubectl patch`, the new value read in the container with `kubectl exec`, and the API server's
 * own request counters (apiserver_request_total, apiserver_longrunning_requests) saying what the
 * agent asked for meanwhile: Get reads both objects at every sync, Cache once per TTL (the Node's
 * node.alpha.orch.io/ttl annotation, 15 s here), Watch never, keeping one watch per object.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { kubectl, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const SYNC_S = 5;
const TTL_S = 15;
/** The window the requests are counted over: six sync periods, two TTLs. */
const WINDOW_MS = 30_000;

interface Counts {
  readonly get: number;
  readonly list: number;
  readonly watch: number;
  /** Watches on ConfigMaps open at the end of the window. */
  readonly openWatches: number;
}

/** The agent's ConfigMap reads: named and namespaced ones (the API server's own controllers watch the whole cluster). */
async function configMapRequests(cluster: Cluster): Promise<Counts> {
  const res = await cluster.server.client.request('GET', '/metrics');
  assert.equal(res.status, 200, res.text);
  const sum = (metric: string, verb: string): number => {
    let n = 0;
    for (const line of res.text.split('\n')) {
      if (!line.startsWith(`${metric}{`) || !line.includes(`verb="${verb}"`) || !line.includes('resource="configmaps"') || line.includes('scope="cluster"')) continue;
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return n;
  };
  return {
    get: sum('apiserver_request_total', 'GET'),
    list: sum('apiserver_request_total', 'LIST'),
    watch: sum('apiserver_request_total', 'WATCH') + sum('apiserver_longrunning_requests', 'WATCH'),
    openWatches: sum('apiserver_longrunning_requests', 'WATCH'),
  };
}

interface Expected {
  /** Bounds of the GETs in the window. */
  readonly gets: readonly [number, number];
  /** Whether the agent keeps watches (and makes no other requests). */
  readonly watches: boolean;
  /** How long the update may take to reach the volume, ms. */
  readonly seenWithinMs: number;
}

const periods = WINDOW_MS / 1000 / SYNC_S;
const ttls = WINDOW_MS / 1000 / TTL_S;
const STRATEGIES: readonly (readonly ['Get' | 'Cache' | 'Watch', Expected])[] = [
  // Two objects at every sync (a sync may land on either side of the window's ends).
  ['Get', { gets: [2 * (periods - 1), 2 * (periods + 2)], watches: false, seenWithinMs: (SYNC_S + 5) * 1000 }],
  // Two objects once per TTL; the update waits for the copy's TTL and then the next sync.
  ['Cache', { gets: [2, 2 * (ttls + 1)], watches: false, seenWithinMs: (SYNC_S + TTL_S + 5) * 1000 }],
  ['Watch', { gets: [0, 0], watches: true, seenWithinMs: (SYNC_S + 5) * 1000 }],
];

for (const [strategy, expected] of STRATEGIES) {
  void describe(`configMapAndSecretChangeDetectionStrategy: ${strategy}`, () => {
    let cluster: Cluster;
    let dir: string;
    let env: KubectlEnv;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'workloads-volume-updates-'));
      await mkdir(join(dir, 'home'));
      await writeFile(join(dir, 'agent.yaml'), [
        'apiVersion: nodeagent.config.orch.io/v1beta1', 'kind: NodeagentConfiguration',
        `configMapAndSecretChangeDetectionStrategy: ${strategy}`, '',
      ].join('\n'));
      // A flag: the test helper's own --sync-frequency would override the file's.
      cluster = await startCluster({ agentArgs: [`--config=${join(dir, 'agent.yaml')}`, `--sync-frequency=${SYNC_S}s`] });
      env = { binary: kubectlBinaries(33, 33).get('1.33') ?? '', kubeconfig: cluster.server.adminKubeconfig, home: join(dir, 'home') };
    });

    after(async () => {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    });

    void it(`a ConfigMap update reaches the volume within ${expected.seenWithinMs / 1000} s; ${expected.watches ? 'one watch per object, no reads' : `${expected.gets[0]}..${expected.gets[1]} GETs in ${WINDOW_MS / 1000} s`}`, { timeout: 180_000 }, async (t) => {
      // The Cache strategy's TTL, as upstream's TTL controller sets it on the Node.
      await kubectl(env, ['annotate', 'node', cluster.node, `node.alpha.orch.io/ttl=${TTL_S}`]);
      await kubectl(env, ['create', 'configmap', 'cfg-a', '--from-literal=value=one']);
      await kubectl(env, ['create', 'configmap', 'cfg-b', '--from-literal=value=b']);
      const pod = {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'reader' },
        spec: {
          nodeName: cluster.node, terminationGracePeriodSeconds: 1, automountServiceAccountToken: false,
          containers: [{
            name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'],
            volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'b', mountPath: '/b' }],
          }],
          volumes: [{ name: 'a', configMap: { name: 'cfg-a' } }, { name: 'b', configMap: { name: 'cfg-b' } }],
        },
      };
      await writeFile(join(dir, 'reader.json'), JSON.stringify(pod));
      await kubectl(env, ['create', '-f', join(dir, 'reader.json')]);
      await waitFor('reader Running', async () => {
        const res = await cluster.server.client.request('GET', '/api/v1/namespaces/default/pods/reader');
        return (res.body as Pod).status?.phase === 'Running';
      }, { timeoutMs: 60_000 });
      const read = async (): Promise<string> => (await kubectl(env, ['exec', 'reader', '--', 'cat', '/a/value', '/b/value'])).stdout;
      assert.equal(await read(), 'oneb');

      const start = Date.now();
      await kubectl(env, ['patch', 'configmap', 'cfg-a', '--type=merge', '-p', '{"data":{"value":"two"}}']);
      // Counted from here: kubectl patch reads the object itself.
      const before = await configMapRequests(cluster);
      await waitFor('the update in the volume', async () => (await read()) === 'twob', { timeoutMs: expected.seenWithinMs + 10_000, intervalMs: 250 });
      const seenAfterMs = Date.now() - start;
      // The rest of the window is the measurement itself: requests are counted over a fixed time.
      await delay(Math.max(0, WINDOW_MS - (Date.now() - start)));
      const end = await configMapRequests(cluster);
      const counts = { get: end.get - before.get, list: end.list - before.list, watch: end.watch - before.watch, openWatches: end.openWatches };
      t.diagnostic(`${strategy}: update seen after ${(seenAfterMs / 1000).toFixed(1)} s; in ${WINDOW_MS / 1000} s: GET ${counts.get}, LIST ${counts.list}, WATCH started ${counts.watch}, watches open ${counts.openWatches}`);

      assert.ok(seenAfterMs <= expected.seenWithinMs, `the update took ${seenAfterMs} ms`);
      assert.ok(counts.get >= expected.gets[0] && counts.get <= expected.gets[1], `GETs: ${counts.get}, expected ${expected.gets.join('..')}`);
      assert.equal(counts.list, 0, 'no LIST in the window');
      assert.equal(counts.watch, 0, 'no new watch in the window');
      assert.equal(counts.openWatches, expected.watches ? 2 : 0);

      // Under Watch the pod's going drops the watches it held.
      if (expected.watches) {
        await kubectl(env, ['delete', 'pod', 'reader', '--wait=true']);
        await waitFor('the watches dropped', async () => (await configMapRequests(cluster)).openWatches === 0, { timeoutMs: 30_000 });
      }
    });
  });
}

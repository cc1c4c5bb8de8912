/**
 * Every kubectl of the machine, 1.27 to 1.33, against orch-apiserver and a real node agent on a
 * real containerd: the everyday commands of kubectl-commands.ts (create, apply, patch, label,
 * get, describe, logs, exec with piped stdin and a terminal, cp both ways, port-forward, top,
 * drain, auth, certificate approve, delete --wait, events) run with each version in turn on one
 * shared cluster. Each version's test runs every command, then fails listing the ones that
 * failed; the table command x version is printed at the end. kubectl 1.30+ speaks WebSocket for
 * exec (1.31+ also for port-forward, tunnelling SPDY), older ones SPDY; 1.32+ send protobuf.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { kubectlBinaries } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';
import { STEPS, type StepContext } from './kubectl-commands.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];

let cluster: Cluster;
let binaries: Map<string, string>;
let dir: string;
/** command -> version -> result ('ok' or the failure's first line). */
const table = new Map<string, Map<string, string>>();

async function runPod(body: Record<string, unknown>): Promise<void> {
  const name = (body.metadata as { name: string }).name;
  const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body });
  assert.equal(res.status, 201, res.text);
  await waitFor(`pod ${name} Running`, async () => {
    const pod = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
    return (pod.body.status as { phase?: string } | undefined)?.phase === 'Running';
  }, { timeoutMs: 60_000 });
}

before(async () => {
  binaries = kubectlBinaries(27, 33);
  dir = await mkdtemp(join(tmpdir(), 'kubectl-versions-'));
  cluster = await startCluster();
  const image = cluster.containerd.images.busybox;
  const pod = (name: string, containers: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } },
    spec: { nodeName: cluster.node, terminationGracePeriodSeconds: 1, containers, ...extra },
  });
  await runPod(pod('web', [
    { name: 'main', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done'] },
    { name: 'http', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'mkdir -p /www && echo "hello from web" > /www/index.html && exec httpd -f -p 8080 -h /www'] },
  ]));
  // Exits once (its emptyDir remembers), so that logs --previous has a previous container.
  await runPod(pod('crashy', [{
    name: 'main', image, imagePullPolicy: 'IfNotPresent', volumeMounts: [{ name: 'state', mountPath: '/state' }],
    command: ['sh', '-c', 'if [ -e /state/ran ]; then echo "second run"; exec sleep 3600; fi; touch /state/ran; echo "first run"; exit 1'],
  }], { volumes: [{ name: 'state', emptyDir: {} }] }));
  await waitFor('crashy restarted once', async () => {
    const res = await cluster.server.client.request('GET', '/api/v1/namespaces/default/pods/crashy');
    const status = (res.body.status as { containerStatuses?: { restartCount: number; ready: boolean }[] } | undefined)?.containerStatuses?.[0];
    return status !== undefined && status.restartCount >= 1 && status.ready;
  }, { timeoutMs: 60_000 });
});

after(async () => {
  const header = `| command | ${VERSIONS.join(' | ')} |`;
  const rows = [...table].map(([command, byVersion]) => `| ${command} | ${VERSIONS.map((v) => byVersion.get(v) ?? '-').join(' | ')} |`);
  process.stdout.write(`\nkubectl commands by version:\n${header}\n|${' --- |'.repeat(VERSIONS.length + 1)}\n${rows.join('\n')}\n`);
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
});

void describe('every kubectl version against orch-apiserver and a real node', () => {
  for (const version of VERSIONS) {
    void it(`kubectl ${version}: the everyday commands`, { timeout: 300_000 }, async () => {
      const binary = binaries.get(version);
      assert.ok(binary !== undefined, `kubectl ${version} is missing`);
      const home = join(dir, `home-${version}`);
      await mkdir(home, { recursive: true });
      const c: StepContext = {
        env: { binary, kubeconfig: cluster.server.adminKubeconfig, home },
        tag: version.replace('.', ''), server: cluster.server, node: cluster.node, dir, runPod, busybox: cluster.containerd.images.busybox,
      };
      const failures: string[] = [];
      for (const step of STEPS) {
        const started = Date.now();
        let result: string;
        try {
          await step.run(c);
          result = `ok ${((Date.now() - started) / 1000).toFixed(1)}s`;
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          result = `FAIL: ${(message.split('\n')[0] ?? '').slice(0, 100)}`;
          failures.push(`${step.name}: ${message}`);
        }
        let byVersion = table.get(step.name);
        if (byVersion === undefined) {
          byVersion = new Map();
          table.set(step.name, byVersion);
        }
        byVersion.set(version, result);
      }
      assert.deepEqual(failures, [], `kubectl ${version}: ${failures.length} command(s) failed:\n${failures.join('\n\n')}`);
    });
  }
});

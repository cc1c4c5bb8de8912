/**
 * The API-server bench: pod start-up through orch-apiserver, from `kubectl create` of a pod bound
 * to the node (spec.nodeName set) to the pod being Running on a watch of the API server, next to
 * raw CRI pods (bench/cri.ts) measured in the same run. One private containerd, one
 * orch-apiserver (SQLite, or etcd with --etcd) and the agent in API-server mode (--orchconfig is
 * the server's admin orchconfig). 20 host-network busybox `sleep` pods one after another (5
 * with --quick), a raw pod and a kubectl pod in turn, as the pod bench does; the kubectl pods
 * stay until the end. For each pod the watch is opened before kubectl starts, so opening it is
 * not timed; kubectl's own run (spawn to exit, mostly its start-up) is printed beside.
 *
 *   node dist/bench/apiserver.js [--quick] [--etcd]
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { KUBECTL, startApiServer, type ApiServer } from '../test/helpers/apiserver.js';
import { freePort, startContainerd } from '../test/helpers/containerd.js';
import { waitFor } from '../test/helpers/wait.js';
import { startAgent, tailOf, type AgentProcess } from './agent.js';
import { runRawPods } from './cri.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, ms, percentile, type Row } from './table.js';

export interface ApiServerBenchOptions {
  readonly quick?: boolean;
  readonly storage?: 'sqlite' | 'etcd';
  readonly print?: (line: string) => void;
}

export interface ApiServerBenchResult {
  readonly storage: 'sqlite' | 'etcd';
  /** Per pod, ms. */
  readonly raw: readonly number[];
  /** kubectl spawned -> Running read from the watch. */
  readonly toRunning: readonly number[];
  /** kubectl spawned -> kubectl exited. */
  readonly kubectl: readonly number[];
}

const NODE_NAME = 'bench-api-node';
const NAMESPACE = 'default';

/** Runs kubectl with the server's admin orchconfig; resolves with the time it exited (performance.now()). */
function kubectl(server: ApiServer, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HOME: path.join(server.dir, 'home'), KUBECONFIG: server.adminKubeconfig };
    execFile(KUBECTL, args, { env, timeout: 60_000 }, (err, _stdout, stderr) => {
      if (err === null) resolve(performance.now());
      else reject(new Error(`kubectl ${args.join(' ')}: ${err.message}\n${stderr}`));
    });
  });
}

/** Creates a pod with kubectl and reads a watch until it is Running: spawn -> Running and spawn -> kubectl's exit, ms. */
async function createPod(server: ApiServer, dir: string, image: string, name: string): Promise<{ toRunning: number; kubectl: number }> {
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NAMESPACE },
    spec: {
      nodeName: NODE_NAME, hostNetwork: true, terminationGracePeriodSeconds: 1,
      containers: [{ name: 'sleep', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    },
  };
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(pod));
  const list = await server.client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
  const rv = (list.body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
  const watch = await server.client.watch(`/api/v1/namespaces/${NAMESPACE}/pods?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`);
  try {
    const t0 = performance.now();
    const exited = kubectl(server, ['create', '-f', file]);
    for (;;) {
      const event = await watch.next(120_000);
      if (event.type === 'ERROR') throw new Error(`the pod watch answered an error: ${JSON.stringify(event.object)}`);
      if ((event.object.status as { phase?: string } | undefined)?.phase === 'Running') {
        return { toRunning: performance.now() - t0, kubectl: (await exited) - t0 };
      }
    }
  } finally {
    watch.close();
  }
}

async function waitNodeReady(server: ApiServer): Promise<void> {
  await waitFor(`node ${NODE_NAME} Ready in the API server`, async () => {
    const res = await server.client.request('GET', `/api/v1/nodes/${NODE_NAME}`);
    const conditions = (res.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    return res.status === 200 && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  }, { timeoutMs: 90_000, intervalMs: 100 });
}

/** Starts containerd, the API server and the agent, measures, and stops them all (also on failure). */
export async function runApiServerBench(o: ApiServerBenchOptions = {}): Promise<ApiServerBenchResult> {
  const storage = o.storage ?? 'sqlite';
  const say = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const pods = o.quick === true ? 5 : 20;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-apiserver-'));
  const podDir = path.join(dir, 'pods');
  await mkdir(podDir, { recursive: true });
  const ctrd = await startContainerd();
  let server: ApiServer | undefined;
  let agent: AgentProcess | undefined;
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  try {
    server = await startApiServer({ storage });
    const raw = { endpoint: ctrd.endpoint, network: 'host', image: ctrd.images.busybox, cgroupRoot: `${ctrd.cgroupRoot}/bench-raw`, logRoot: ctrd.logDir } as const;
    agent = await startAgent({
      endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, dir, nodeName: NODE_NAME,
      args: [`--orchconfig=${server.adminKubeconfig}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`],
    });
    say(`containerd ${ctrd.endpoint}; orch-apiserver ${server.url} (${storage}); nodeagent pid ${agent.pid}, log ${agent.logFile}`);
    await waitNodeReady(server);
    // Warm-up: the page cache, kubectl's discovery cache, the agent's code paths.
    await runRawPods(raw, 2);
    for (let i = 0; i < 2; i++) await createPod(server, podDir, ctrd.images.busybox, `warm-${i}`);

    const result = { storage, raw: [] as number[], toRunning: [] as number[], kubectl: [] as number[] };
    const { steal } = await withSteal(async () => {
      for (let i = 0; i < pods; i++) {
        result.raw.push((await runRawPods(raw, 1)).podMs[0] ?? NaN);
        const pod = await createPod(server as ApiServer, podDir, ctrd.images.busybox, `seq-${i}`);
        result.toRunning.push(pod.toRunning);
        result.kubectl.push(pod.kubectl);
      }
    });
    say(`${pods} pods: raw p50 ${ms(percentile(result.raw, 50))} ms, kubectl create → Running p50 ${ms(percentile(result.toRunning, 50))} ms; steal ${steal.toFixed(0)} %`);

    await kubectl(server, ['delete', 'pods', '--all', '--namespace', NAMESPACE, '--wait=false']);
    await waitFor('the pods deleted and their containers gone', async () => {
      const left = await cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE } });
      const listed = await (server as ApiServer).client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
      return left.length === 0 && Array.isArray(listed.body.items) && listed.body.items.length === 0;
    }, { timeoutMs: 120_000, intervalMs: 200 });
    return result;
  } catch (err) {
    if (agent !== undefined) say(`failed; the end of ${agent.logFile}:\n${await tailOf(agent.logFile)}`);
    throw err;
  } finally {
    cri.close();
    await agent?.stop();
    await server?.stop();
    await ctrd.stop();
  }
}

export function apiServerRows(r: ApiServerBenchResult): Row[] {
  const p = (v: readonly number[]): string => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))} ms`;
  return [{
    measure: `API-server mode (${r.storage === 'sqlite' ? 'SQLite' : 'etcd'}): \`kubectl create\` → Running on a watch, ${r.raw.length} host-network pods one after another, p50 / p99`,
    baseline: `raw CRI ${p(r.raw)}`,
    ours: `${p(r.toRunning)} (kubectl's own run ${ms(percentile(r.kubectl, 50))} ms)`,
    target: '',
  }];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, etcd: { type: 'boolean', default: false } } });
  const result = await runApiServerBench({ quick: values.quick, storage: values.etcd ? 'etcd' : 'sqlite' });
  process.stdout.write(`${formatTable(apiServerRows(result)).join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench apiserver: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

/**
 * Pod start-up through the API server: the time from `kubectl create` of a pod bound to the node
 * (spec.nodeName set) to the pod being Running as seen by a watch on the API server, next to the
 * raw CRI floor measured in the same run, on one private containerd (test/helpers/containerd.ts),
 * one orch-apiserver (SQLite, or etcd with --etcd) and the real nodeagent binary in API-server
 * mode (--orchconfig = the server's admin orchconfig, --hostname-override, --node-ip=127.0.0.1,
 * a free --port):
 *
 *   (a) raw floor: RunPodSandbox + CreateContainer + StartContainer straight over CRI
 *       (bench/cri-floor.ts, host network, the agent's labels and log layout), N pods one after
 *       another, measured before the agent starts (so that it does not adopt or remove them);
 *   (b) N pods created one after another with the real kubectl (`kubectl create -f <file>`), each
 *       waited for until the pod watch (opened before the runs) delivers it with status.phase
 *       Running: kubectl spawn -> Running; ADDED -> Running; kubectl alone (spawn -> exit), its
 *       start-up being a fixed cost the agent has nothing to do with;
 *   (c) unless --burst 0: M pods at once with one `kubectl create -f <directory>`, next to the raw
 *       calls at the best of 2, 4 and 8 in flight.
 *
 * Host-network busybox `sleep 3600` pods, image present, pull policy IfNotPresent; all pods are
 * deleted between phases (kubectl delete pods --all) and waited for until gone. The agent, the API
 * server (and its etcd) and containerd are stopped at the end, also on failure; the agent's log
 * is kept in a temporary directory (named in the output). Not a test: it prints tables and fails
 * on nothing. The machine's 2 cores are shared: the numbers are noisy.
 *
 *   npm run build && node dist/bench/agent-apiserver.js [--quick] [--etcd] [--pods N] [--burst M] [--verbosity V]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { NODEAGENT_BIN } from '../test/helpers/agent.js';
import { startApiServer, type ApiServer } from '../test/helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { WaitAbandoned, waitFor } from '../test/helpers/wait.js';
import { createBurst, createSequential, deleteAll, type BurstSample, type KubectlPhaseContext, type PodSample } from './agent-apiserver-phases.js';
import { formatAgentApiServerTable } from './agent-apiserver-table.js';
import { PodWatch } from './agent-apiserver-watch.js';
import { tailOf } from './agent-process.js';
import { fastest, measureCriFloor, type CriFloorResult } from './cri-floor.js';

export { formatAgentApiServerTable } from './agent-apiserver-table.js';

export interface AgentApiServerOptions {
  /** 5 pods in (a), (b) and (c) instead of 20. */
  readonly quick?: boolean;
  readonly storage?: 'sqlite' | 'etcd';
  /** Pods one after another in (a) and (b) (default 20, 5 with quick). */
  readonly sequentialPods?: number;
  /** Pods at once in (c) (default 20, 5 with quick; 0: no burst phase). */
  readonly burstPods?: number;
  /** -v of the agent (default: none given, the agent's own default). */
  readonly verbosity?: number;
  /** Where progress lines go (default: stderr; the tables are returned, not printed). */
  readonly print?: (line: string) => void;
}

export interface AgentApiServerResult {
  readonly storage: 'sqlite' | 'etcd';
  readonly raw: CriFloorResult;
  readonly sequential: readonly PodSample[];
  readonly rawBurst: readonly CriFloorResult[];
  readonly rawBurstBest?: CriFloorResult;
  readonly burst?: BurstSample;
  /** Agent spawned -> its node Ready in the API server. */
  readonly nodeReadyMs: number;
  readonly loadAverage: { readonly start: number; readonly end: number };
  readonly cpus: number;
  readonly agentLog: string;
}

const NODE_NAME = 'bench-api-node';
const NAMESPACE = 'default';

interface AgentChild {
  readonly pid: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Spawns bin/nodeagent in API-server mode with its log in a file; resolves once it says it runs. */
async function startApiAgent(ctrd: ContainerdInstance, server: ApiServer, dir: string, verbosity: number | undefined): Promise<AgentChild> {
  const rootDir = path.join(dir, 'root');
  const logFile = path.join(dir, 'agent.log');
  await mkdir(rootDir, { recursive: true });
  const args = [
    `--container-runtime-endpoint=${ctrd.endpoint}`,
    `--root-dir=${rootDir}`,
    `--cert-dir=${path.join(rootDir, 'pki')}`,
    `--cgroup-root=${ctrd.cgroupRoot}`,
    `--hostname-override=${NODE_NAME}`,
    '--node-ip=127.0.0.1',
    `--port=${await freePort()}`,
    `--orchconfig=${server.adminKubeconfig}`,
    '--healthz-port=0',
    '--read-only-port=0',
    ...(verbosity === undefined ? [] : [`-v=${verbosity}`]),
  ];
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(NODEAGENT_BIN, args, { stdio: ['ignore', out, out] });
  } finally {
    closeSync(out); // the child has its own descriptor
  }
  const killOnExit = (): void => {
    if (!exited(child)) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit); // the agent must not outlive the benchmark
  const gone = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    });
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exited(child)) return;
      child.kill('SIGTERM');
      if (await Promise.race([gone.then(() => false), delay(15_000, true)])) {
        process.stderr.write(`agent-apiserver: nodeagent (pid ${child.pid ?? '?'}) ignored SIGTERM for 15 s; killing it\n`);
        child.kill('SIGKILL');
        await gone;
      }
    })();
    return stopping;
  };
  try {
    const pid = child.pid;
    if (pid === undefined) throw new Error(`cannot spawn ${NODEAGENT_BIN}`);
    await waitFor('nodeagent to start (its log to say "nodeagent running")', async () => {
      if (exited(child)) throw new WaitAbandoned(`nodeagent exited (${String(child.exitCode ?? child.signalCode)})`);
      return (await readFile(logFile, 'utf8')).includes('nodeagent running');
    }, { timeoutMs: 60_000, intervalMs: 50 });
    return { pid, logFile, stop };
  } catch (err) {
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}; log ${logFile}:\n${await tailOf(logFile)}`, { cause: err });
  }
}

async function waitNodeReady(server: ApiServer): Promise<void> {
  await waitFor(`node ${NODE_NAME} Ready in the API server`, async () => {
    const res = await server.client.request('GET', `/api/v1/nodes/${NODE_NAME}`);
    if (res.status !== 200) return false;
    const conditions = (res.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  }, { timeoutMs: 90_000, intervalMs: 100 });
}

/** Runs (a) to (c) on a running containerd and API server. */
async function measure(ctrd: ContainerdInstance, server: ApiServer, dir: string, storage: 'sqlite' | 'etcd', options: AgentApiServerOptions): Promise<AgentApiServerResult> {
  const say = options.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const sequential = options.sequentialPods ?? (options.quick === true ? 5 : 20);
  const burst = options.burstPods ?? (options.quick === true ? 5 : 20);
  const loadStart = os.loadavg()[0] ?? 0;
  const raw = { endpoint: ctrd.endpoint, network: 'host', image: ctrd.images.busybox, cgroupRoot: `${ctrd.cgroupRoot}/bench-raw`, logRoot: ctrd.logDir, agentLabels: true } as const;
  await measureCriFloor({ ...raw, pods: 2 }); // warm-up: page cache, containerd's code paths
  const rawBurst: CriFloorResult[] = [];
  if (burst > 0) {
    for (const concurrency of [2, 4, 8]) {
      rawBurst.push(await measureCriFloor({ ...raw, pods: burst, concurrency }));
      say(`(c) raw CRI, ${burst} pods, ${concurrency} in flight: ${((rawBurst.at(-1)?.totalMs ?? 0) / 1000).toFixed(2)} s`);
    }
  }
  say(`(a) raw CRI floor, ${sequential} pods one after another`);
  const floor = await measureCriFloor({ ...raw, pods: sequential });
  say(`(a) p50 ${floor.p50Ms} ms, p99 ${floor.p99Ms} ms`);

  const spawnedAt = performance.now();
  const agent = await startApiAgent(ctrd, server, dir, options.verbosity);
  say(`nodeagent pid ${agent.pid}, log ${agent.logFile}`);
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  let watch: PodWatch | undefined;
  try {
    await waitNodeReady(server);
    const nodeReadyMs = performance.now() - spawnedAt;
    say(`node ${NODE_NAME} Ready after ${(nodeReadyMs / 1000).toFixed(2)} s`);
    watch = await PodWatch.open(server.client, NAMESPACE);
    const podDir = path.join(dir, 'pods');
    await mkdir(podDir, { recursive: true });
    const ctx: KubectlPhaseContext = { server, watch, cri, dir: podDir, namespace: NAMESPACE, nodeName: NODE_NAME, image: ctrd.images.busybox };
    // Warm-up: kubectl's discovery cache (in the server's HOME), the agent's code paths.
    const warm = await createSequential(ctx, 'warm', 2);
    await deleteAll(ctx, warm.map((w) => w.name));

    say(`(b) ${sequential} pods one after another with kubectl create`);
    const seq = await createSequential(ctx, 'seq', sequential);
    say(`(b) kubectl create -> Running: ${seq.map((x) => Math.round(x.toRunningMs)).join(' ')} ms`);
    say(`(b) removed the pods in ${((await deleteAll(ctx, seq.map((x) => x.name))) / 1000).toFixed(1)} s`);

    let burstRun: BurstSample | undefined;
    if (burst > 0) {
      say(`(c) ${burst} pods at once with one kubectl create -f <directory>`);
      burstRun = await createBurst(ctx, 'burst', burst);
      say(`(c) all Running after ${(burstRun.totalMs / 1000).toFixed(2)} s`);
      const names = Array.from({ length: burst }, (_, i) => `burst-${i}`);
      say(`(c) removed the pods in ${((await deleteAll(ctx, names)) / 1000).toFixed(1)} s`);
    }
    const rawBurstBest = rawBurst.length === 0 ? undefined : fastest(rawBurst);
    return {
      storage,
      raw: floor,
      sequential: seq,
      rawBurst,
      ...(rawBurstBest === undefined ? {} : { rawBurstBest }),
      ...(burstRun === undefined ? {} : { burst: burstRun }),
      nodeReadyMs,
      loadAverage: { start: loadStart, end: os.loadavg()[0] ?? 0 },
      cpus: os.cpus().length,
      agentLog: agent.logFile,
    };
  } catch (err) {
    say(`failed; the end of ${agent.logFile}:\n${await tailOf(agent.logFile)}`);
    throw err;
  } finally {
    await watch?.close();
    await agent.stop();
    cri.close();
  }
}

/**
 * Starts containerd and the API server, measures, and stops everything (also on failure): the
 * agent (it leaves its containers), then the API server, then containerd with every pod left.
 * Only the agent's log stays, in a temporary directory.
 */
export async function runAgentApiServerBench(options: AgentApiServerOptions = {}): Promise<AgentApiServerResult> {
  const storage = options.storage ?? 'sqlite';
  const say = options.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-agent-apiserver-'));
  const ctrd = await startContainerd();
  let server: ApiServer | undefined;
  try {
    server = await startApiServer({ storage });
    say(`containerd ${ctrd.endpoint}; orch-apiserver ${server.url} (${storage}); agent log under ${dir}`);
    return await measure(ctrd, server, dir, storage, options);
  } finally {
    await server?.stop();
    await ctrd.stop();
    for (const sub of ['root', 'pods']) {
      await rm(path.join(dir, sub), { recursive: true, force: true }).catch((err: unknown) => {
        say(`agent-apiserver: cannot remove ${path.join(dir, sub)}: ${String(err)}`);
      });
    }
  }
}

async function main(): Promise<void> {
  process.once('SIGINT', () => process.exit(130)); // exit hooks kill the agent, API server and containerd
  process.once('SIGTERM', () => process.exit(143));
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      etcd: { type: 'boolean', default: false },
      pods: { type: 'string' },
      burst: { type: 'string' },
      verbosity: { type: 'string' },
    },
  });
  const count = (v: string | undefined, flag: string, min: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} must be a whole number of at least ${min}, got ${v}`);
    return n;
  };
  const sequentialPods = count(values.pods, 'pods', 1);
  const burstPods = count(values.burst, 'burst', 0);
  const verbosity = count(values.verbosity, 'verbosity', 0);
  const result = await runAgentApiServerBench({
    quick: values.quick,
    storage: values.etcd ? 'etcd' : 'sqlite',
    ...(sequentialPods === undefined ? {} : { sequentialPods }),
    ...(burstPods === undefined ? {} : { burstPods }),
    ...(verbosity === undefined ? {} : { verbosity }),
  });
  process.stdout.write(`${formatAgentApiServerTable(result).join('\n')}\n`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`agent-apiserver: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

/**
 * Real etcd for integration tests and benchmarks: starts Debian's `etcd` (1 or 3 members) on free
 * loopback ports (new ones when another process took one first) with temporary data
 * directories, waits until every member serves a linearizable read, and kills every process it
 * started on stop() (or when the test process exits). A missing binary is an error, never a
 * skip. Also: etcd's watch counters and the connections this machine holds to a member, for
 * tests that check a client keeps them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort } from './loopback.js';
import { WaitAbandoned, waitFor } from './wait.js';

export { freePort } from './loopback.js';

export interface EtcdOptions {
  readonly members?: 1 | 3;
  /** etcd's --experimental-watch-progress-notify-interval (default 200ms, etcd's own is 10m). */
  readonly progressNotifyInterval?: string;
  /** Time allowed for the cluster to become healthy, in ms (default 30 000). */
  readonly startTimeoutMs?: number;
  /** Picks each port (default freePort); tests of this helper give one that returns a taken port. */
  readonly pickPort?: () => Promise<number>;
}

export interface EtcdCluster {
  /** Client URLs, one per member, e.g. http://127.0.0.1:43211. */
  readonly endpoints: string[];
  /** Stops member i (SIGTERM, then SIGKILL) and waits for its exit. */
  stopMember(i: number): Promise<void>;
  /** Stops every member and removes the data directories. Idempotent. */
  stop(): Promise<void>;
  /** The pids of the member processes started so far. */
  pids(): number[];
}

interface Member {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dir: string;
  readonly logFile: string;
  process: ChildProcess | undefined;
  exited: Promise<void>;
}

function checkBinary(): void {
  const probe = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      'the etcd binary is missing (Debian packages etcd-server and etcd-client): run `bash scripts/install-packages.sh` as root' +
        (probe.error === undefined ? '' : ` (${probe.error.message})`),
    );
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch (err) {
    return `(no log: ${err instanceof Error ? err.message : String(err)})`;
  }
}

async function healthy(endpoint: string): Promise<boolean> {
  const client = new Etcd3({ hosts: endpoint, defaultCallOptions: { deadline: Date.now() + 1000 } });
  try {
    await client.get('health-probe').string();
    return true;
  } finally {
    client.close();
  }
}

function launch(member: Member, cluster: string, token: string, progressInterval: string): void {
  const log = openSync(member.logFile, 'a');
  const child = spawn(
    'etcd',
    [
      '--name', member.name,
      '--data-dir', join(member.dir, 'data'),
      '--listen-client-urls', member.clientUrl,
      '--advertise-client-urls', member.clientUrl,
      '--listen-peer-urls', member.peerUrl,
      '--initial-advertise-peer-urls', member.peerUrl,
      '--initial-cluster', cluster,
      '--initial-cluster-token', token,
      '--initial-cluster-state', 'new',
      '--experimental-watch-progress-notify-interval', progressInterval,
      '--logger', 'zap',
    ],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  member.process = child;
  member.exited = new Promise((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
}

async function stopProcess(member: Member): Promise<void> {
  const child = member.process;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await member.exited;
  clearTimeout(killer);
}

/** Starts of the cluster tried, each on new ports, when a process running meanwhile took one first. */
const PORT_ATTEMPTS = 5;
/** What etcd logs when a port it was given is taken (`bind: address already in use`). */
const PORT_TAKEN = /address already in use/;

/** Members on new ports, with directories of their own for this attempt. */
async function newMembers(root: string, count: number, attempt: number, pickPort: () => Promise<number>): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < count; i++) {
    members.push({
      name: `m${i}`,
      clientUrl: `http://127.0.0.1:${await pickPort()}`,
      peerUrl: `http://127.0.0.1:${await pickPort()}`,
      dir: join(root, `attempt${attempt}`, `m${i}`),
      logFile: join(root, `m${i}.attempt${attempt}.log`),
      process: undefined,
      exited: Promise.resolve(),
    });
  }
  return members;
}

/** Launches every member and waits until each serves a read; throws when one exits or the time is up. */
async function launchAll(members: readonly Member[], options: EtcdOptions): Promise<void> {
  const cluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const token = `orch-test-${process.pid}-${Date.now()}`;
  for (const m of members) launch(m, cluster, token, options.progressNotifyInterval ?? '200ms');
  for (const m of members) {
    await waitFor(
      `etcd member ${m.name} at ${m.clientUrl} to serve reads`,
      () => {
        if (m.process?.exitCode !== null) throw new WaitAbandoned(`etcd ${m.name} exited: ${tail(m.logFile)}`);
        return healthy(m.clientUrl);
      },
      { timeoutMs: options.startTimeoutMs ?? 30_000, intervalMs: 100 },
    );
  }
}

/**
 * The ports are picked free before etcd binds them, so a test running at the same time may take
 * one first: etcd then exits with `address already in use`, and the cluster is started again on
 * new ports (up to PORT_ATTEMPTS times).
 */
export async function startEtcd(options: EtcdOptions = {}): Promise<EtcdCluster> {
  checkBinary();
  const count = options.members ?? 1;
  const root = mkdtempSync(join(tmpdir(), 'orch-etcd-'));
  let members: Member[] = [];
  // The test process is exiting without stop(): kill what is left and try to remove the files.
  const killAll = (): void => {
    for (const m of members) if (m.process?.exitCode === null && m.process.signalCode === null) m.process.kill('SIGKILL');
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      process.stderr.write(`etcd helper: could not remove ${root}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  };
  process.once('exit', killAll);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(members.map(stopProcess));
    process.removeListener('exit', killAll);
    rmSync(root, { recursive: true, force: true });
  };
  for (let attempt = 1; ; attempt++) {
    members = await newMembers(root, count, attempt, options.pickPort ?? freePort);
    try {
      await launchAll(members, options);
      break;
    } catch (err) {
      await Promise.all(members.map(stopProcess));
      const taken = members.some((m) => PORT_TAKEN.test(tail(m.logFile)));
      if (taken && attempt < PORT_ATTEMPTS) continue;
      const logs = members.map((m) => `--- ${m.name}\n${tail(m.logFile)}`).join('\n');
      await stop();
      const why = taken ? ` (a port was taken before etcd bound it, ${attempt} times)` : '';
      throw new Error(`etcd did not start${why}: ${err instanceof Error ? err.message : String(err)}\n${logs}`);
    }
  }
  return {
    endpoints: members.map((m) => m.clientUrl),
    stopMember: async (i) => {
      const member = members[i];
      if (member === undefined) throw new Error(`no etcd member ${i}`);
      await stopProcess(member);
    },
    stop,
    pids: () => members.flatMap((m) => (m.process?.pid === undefined ? [] : [m.process.pid])),
  };
}

export interface EtcdWatchCounters {
  /** Watch streams the members have opened (grpc_server_started_total, Watch): a client's stream, and each restart of it. */
  readonly watchStreams: number;
  /** Watchers open now (etcd_debugging_mvcc_watcher_total). */
  readonly watchers: number;
}

/** A member's /metrics, on a connection closed after the answer (no keep-alive left open to count). */
function metricsOf(endpoint: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${endpoint}/metrics`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => { resolve(text); });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** etcd's watch counters, summed over the members given. */
export async function etcdWatchCounters(endpoints: readonly string[]): Promise<EtcdWatchCounters> {
  let watchStreams = 0;
  let watchers = 0;
  for (const endpoint of endpoints) {
    const text = await metricsOf(endpoint);
    for (const line of text.split('\n')) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('grpc_server_started_total{') && line.includes('grpc_method="Watch"')) watchStreams += value;
      else if (line.startsWith('etcd_debugging_mvcc_watcher_total ')) watchers += value;
    }
  }
  return { watchStreams, watchers };
}

/**
 * The local ports of this process's established IPv4 TCP connections to a member's client port,
 * sorted (etcd's own gateway holds one to itself: not counted).
 */
export function connectionsTo(endpoint: string): number[] {
  const port = Number(new URL(endpoint).port);
  const mine = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith('socket:[')) mine.add(target.slice('socket:['.length, -1));
    } catch {
      // The descriptor closed while we listed them.
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [, local, remote, state] = fields;
    if (local === undefined || remote === undefined || state !== '01' || !mine.has(fields[9] ?? '')) continue;
    if (parseInt(remote.split(':')[1] ?? '', 16) === port) ports.push(parseInt(local.split(':')[1] ?? '', 16));
  }
  return ports.sort((x, y) => x - y);
}

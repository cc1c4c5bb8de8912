/**
 * Requests per second of the agent's secure port next to a baseline measured in the same run:
 *
 *   nodeagent: the real binary on a private containerd with 110 host-network busybox `sleep`
 *   pods running, client-certificate authentication, AlwaysAllow; GET /pods (the PodList of
 *   the 110 pods with their statuses) and GET /healthz.
 *   baseline: a bare Node.js https server in its own process, with the same kind of serving
 *   key (RSA 2048) and client-certificate request, answering a fixed body of the same size.
 *
 * Both are driven by this process: keep-alive connections, 16 requests in flight, three
 * alternating rounds per endpoint (agent, baseline, agent, ...) after a 1 s warm-up each, so
 * that both see the same background load of the machine. The agent runs with upstream's sync
 * and file-check periods. Not a test: prints a table, fails on nothing but setup.
 *   node dist/bench/server.js [--quick] [--seconds N] [--pods N]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCertificate } from '../src/agent/server/index.js';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { startAgentProcess } from '../test/helpers/agent.js';
import { freePort, startContainerd } from '../test/helpers/containerd.js';
import { NODE, podManifest } from '../test/helpers/pods.js';
import { waitFor } from '../test/helpers/wait.js';

const CONCURRENCY = 16;

interface Load {
  readonly requests: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly bytes: number;
}

interface Target {
  readonly port: number;
  readonly ca?: string;
  readonly cert: string;
  readonly key: string;
}

function get(agent: Agent, t: Target, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, path, agent, cert: t.cert, key: t.key, rejectUnauthorized: false }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => { bytes += d.length; });
      res.on('end', () => { if (res.statusCode === 200) resolve(bytes); else reject(new Error(`GET ${path}: ${res.statusCode ?? 0}`)); });
    });
    req.on('error', reject);
    req.end();
  });
}

/** `CONCURRENCY` loops of keep-alive GETs for `seconds` (after `warmupSeconds`). */
async function drive(t: Target, path: string, seconds: number, warmupSeconds: number): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let bytes = 0;
  const loop = async (until: number, record: boolean): Promise<void> => {
    while (Date.now() < until) {
      const started = process.hrtime.bigint();
      bytes = await get(agent, t, path);
      if (record) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  };
  const warm = Date.now() + warmupSeconds * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, () => loop(warm, false)));
  const start = Date.now();
  const end = start + seconds * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, () => loop(end, true)));
  const took = (Date.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { requests: latencies.length, seconds: took, p50: pct(0.5), p99: pct(0.99), bytes };
}

/** The baseline server: its own node process answering fixed bodies of the given sizes. */
async function startBaseline(dir: string, serving: { certPem: string; keyPem: string }, caFile: string, sizes: Readonly<Record<string, number>>): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  await writeFile(join(dir, 'baseline.crt'), serving.certPem);
  await writeFile(join(dir, 'baseline.key'), serving.keyPem);
  const script = `
    import { createServer } from 'node:https';
    import { readFileSync } from 'node:fs';
    const sizes = ${JSON.stringify(sizes)};
    const bodies = Object.fromEntries(Object.entries(sizes).map(([p, n]) => [p, Buffer.from('{"items":"' + 'x'.repeat(Math.max(0, n - 12)) + '"}')]));
    const server = createServer({ cert: readFileSync(${JSON.stringify(join(dir, 'baseline.crt'))}), key: readFileSync(${JSON.stringify(join(dir, 'baseline.key'))}),
      ca: readFileSync(${JSON.stringify(caFile)}), requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const body = bodies[req.url] ?? Buffer.from('');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    });
    server.keepAliveTimeout = 90000;
    server.listen(${port}, '::', () => process.stdout.write('listening\\n'));
    process.on('SIGTERM', () => process.exit(0));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  return { port, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit'); } };
}

export async function runServerBench(o: { readonly seconds: number; readonly pods: number; readonly print: (line: string) => void }): Promise<void> {
  const containerd = await startContainerd();
  const dir = await mkdtemp(join(tmpdir(), 'nodeagent-bench-server-'));
  const stops: (() => Promise<unknown>)[] = [() => containerd.stop(), () => rm(dir, { recursive: true, force: true })];
  try {
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    for (let i = 0; i < o.pods; i++) {
      await writeFile(join(manifests, `sleep-${i}.yaml`), podManifest({ name: `sleep-${i}`, image: containerd.images.busybox, hostNetwork: true, command: 'exec sleep 3600' }));
    }
    const ca = await createCertificate({ subject: { commonName: 'bench-ca' }, isCA: true, keyType: 'ecdsa' });
    const client = await createCertificate({ subject: { commonName: 'bench' }, issuer: ca, clientAuth: true, keyType: 'ecdsa' });
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, ca.certPem);
    const port = await freePort();
    const agent = await startAgentProcess({
      endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir: join(dir, 'root'),
      args: [
        `--hostname-override=${NODE}`, `--port=${port}`, `--client-ca-file=${caFile}`, '--anonymous-auth=false', '--authorization-mode=AlwaysAllow',
        `--max-pods=${Math.max(110, o.pods)}`, '--sync-frequency=1m', '--file-check-frequency=20s', // upstream's defaults, not the tests' quick ones
      ],
    });
    stops.unshift(() => agent.stop());
    const target: Target = { port, cert: client.certPem, key: client.keyPem };
    const cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 60_000 });
    const started = Date.now();
    await waitFor(`${o.pods} running containers`, async () => (await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })).length >= o.pods, { timeoutMs: 600_000, intervalMs: 500 });
    cri.close();
    o.print(`${o.pods} pods running after ${((Date.now() - started) / 1000).toFixed(1)} s; ${CONCURRENCY} requests in flight, keep-alive, client certificate; ${o.seconds} s per endpoint\n`);
    const podsBytes = await get(new Agent({ keepAlive: false }), target, '/pods');
    const serving = { certPem: await readFile(join(dir, 'root', 'pki', 'nodeagent.crt'), 'utf8'), keyPem: await readFile(join(dir, 'root', 'pki', 'nodeagent.key'), 'utf8') };
    const baseline = await startBaseline(dir, serving, caFile, { '/pods': podsBytes, '/healthz': 2 });
    stops.unshift(() => baseline.stop());
    const rows: string[] = [];
    for (const path of ['/pods', '/healthz']) {
      // Alternate rounds, so that both sides see the same background load of the machine.
      const rounds = 3;
      const a: Load[] = [];
      const b: Load[] = [];
      for (let r = 0; r < rounds; r++) {
        a.push(await drive(target, path, o.seconds / rounds, 1));
        b.push(await drive({ ...target, port: baseline.port }, path, o.seconds / rounds, 1));
      }
      rows.push(row(path, merge(a), merge(b)));
    }
    o.print('| endpoint | body bytes | nodeagent req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | nodeagent / baseline |');
    o.print('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) o.print(r);
    o.print('\nbaseline: a bare Node https server (own process, RSA serving key, client certificate requested) with a fixed body of the same size.');
    o.print(`machine load average (1 min) at the end: ${(loadavg()[0] ?? 0).toFixed(1)} (other work on the machine slows both sides alike, not equally: compare within one run)`);
  } finally {
    for (const stop of stops) await stop();
  }
}

/** Rounds summed: requests over time; the percentiles of the median round. */
function merge(loads: readonly Load[]): Load {
  const byRate = [...loads].sort((x, y) => x.requests / x.seconds - y.requests / y.seconds);
  const mid = byRate[Math.floor(byRate.length / 2)] ?? loads[0];
  return {
    requests: loads.reduce((n, l) => n + l.requests, 0), seconds: loads.reduce((n, l) => n + l.seconds, 0),
    p50: mid?.p50 ?? 0, p99: mid?.p99 ?? 0, bytes: loads[0]?.bytes ?? 0,
  };
}

function row(path: string, a: Load, b: Load): string {
  const rps = (l: Load): number => l.requests / l.seconds;
  return `| ${path} | ${a.bytes} | ${rps(a).toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${rps(b).toFixed(0)} | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${(rps(a) / rps(b)).toFixed(2)} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, seconds: { type: 'string' }, pods: { type: 'string', default: '110' } } });
  const seconds = Number(values.seconds ?? (values.quick ? 3 : 10));
  await runServerBench({ seconds, pods: Number(values.pods), print: (line) => { process.stdout.write(`${line}\n`); } });
}

if (process.argv[1]?.endsWith('server.js') === true) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

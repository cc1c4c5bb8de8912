/**
 * Part of nodeagent's composition root: `nodeagent simulate`, N simulated nodes (simulate-node.ts)
 * in this process on one clock and one log root. Each node has its own REST client (its own
 * keep-alive connection and watch connection, as N agents would), so that the API server sees
 * what N agents cost it. Prints JSON lines on stdout: `started` once every node started, and
 * `cost` (CPU and RSS of this process, per node) when it stops.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../api/clock.js';
import { messageOf } from '../api/errors.js';
import { resolveConfiguration } from '../agent/config/index.js';
import { loadOrchconfig } from '../agent/orchclient/index.js';
import { nodeConnection, parseSimulateFlags, simulatedNodeIP, SIMULATE_USAGE, type SimulateFlags } from '../agent/simulate/index.js';
import { VERSION } from '../version.js';
import { buildLogRoot } from './agent-logs.js';
import { startSimulatedNode, type SimulatedNode } from './simulate-node.js';

interface CpuPoint {
  readonly at: number;
  readonly cpuUs: number;
}

function cpuNow(): CpuPoint {
  const u = process.cpuUsage();
  return { at: performance.now(), cpuUs: u.user + u.system };
}

function line(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

/** Runs until SIGTERM or SIGINT; resolves to the exit code. */
export async function simulate(argv: readonly string[]): Promise<number> {
  let flags: SimulateFlags;
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(SIMULATE_USAGE);
      return 0;
    }
    flags = parseSimulateFlags(argv);
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n\n${SIMULATE_USAGE}`);
    return 2;
  }
  const base = await resolveConfiguration({
    argv: ['--orchconfig', flags.orchconfig, ...flags.agentArgs], env: {}, cwd: process.cwd(), version: VERSION,
  });
  const clock = realClock;
  // Static for every node: read and parsed once (the TLS material's secure context with it, transport.ts).
  const connection = await loadOrchconfig(flags.orchconfig);
  try {
    nodeConnection(connection, flags.namePrefix, flags.tokenPerNode);
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n`);
    return 2;
  }
  const logs = buildLogRoot(base, clock);
  const log = logs.logger('simulate');
  const logsDir = mkdtempSync(join(tmpdir(), 'nodeagent-simulate-'));
  const nodes: SimulatedNode[] = [];
  const begin = cpuNow();
  let failed = 0;
  const stop = new AbortController();
  const onSignal = (): void => { stop.abort(); };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const starts: Promise<void>[] = [];
    for (let k = 0; k < flags.nodes && !stop.signal.aborted; k++) {
      const i = flags.firstIndex + k;
      if (flags.rampMs > 0 && k > 0) await clock.sleep(flags.rampMs / flags.nodes, stop.signal).catch(() => undefined);
      starts.push(startSimulatedNode({
        name: `${flags.namePrefix}${i}`, ip: simulatedNodeIP(i), labels: flags.labels, taints: flags.taints.map((t) => ({ ...t, timeAdded: null })),
        capacity: flags.capacity, maxPods: flags.maxPods, sandboxDelayMs: flags.sandboxDelayMs, startDelayMs: flags.startDelayMs,
      }, { base, logs, clock, logsDir, connection: nodeConnection(connection, `${flags.namePrefix}${i}`, flags.tokenPerNode) }).then((node) => { nodes.push(node); }, (err: unknown) => {
        failed += 1;
        log.error('A simulated node did not start', { node: `${flags.namePrefix}${i}`, err: messageOf(err) });
      }));
    }
    await Promise.all(starts);
    const started = cpuNow();
    line({ event: 'started', nodes: nodes.length, failed, ms: Math.round(started.at - begin.at) });
    if (!stop.signal.aborted) await new Promise<void>((resolve) => { stop.signal.addEventListener('abort', () => { resolve(); }, { once: true }); });
    const end = cpuNow();
    const { rss, heapUsed, external } = process.memoryUsage();
    const n = Math.max(1, nodes.length);
    const steadyS = (end.at - started.at) / 1000;
    line({
      event: 'cost', nodes: nodes.length,
      cpuSeconds: Number(((end.cpuUs - begin.cpuUs) / 1e6).toFixed(2)),
      // CPU per node while they ran (after the start): the share of a core, in thousandths.
      mcpuPerNode: steadyS > 0 ? Number(((end.cpuUs - started.cpuUs) / 1e3 / steadyS / n).toFixed(2)) : 0,
      rssBytes: rss, rssPerNodeBytes: Math.round(rss / n), windowSeconds: Number(steadyS.toFixed(1)),
      // Where the RSS is: V8's heap (JavaScript objects), or outside it (TLS connections, buffers).
      heapUsedPerNodeBytes: Math.round(heapUsed / n), externalPerNodeBytes: Math.round(external / n),
    });
    await Promise.all(nodes.map((node) => node.stop().catch((err: unknown) => {
      log.error('Stopping a simulated node failed', { node: node.name, err: messageOf(err) });
    })));
    return failed === 0 ? 0 : 1;
  } finally {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    rmSync(logsDir, { recursive: true, force: true });
    logs.close();
  }
}

/**
 * The keep-alive race behind "socket hang up" on lease PUTs under load: a server (a process of its
 * own, so that its timers run while ours do not) closes a kept-alive connection after its
 * keep-alive timeout (--keepalive-ms, default 2,000; orch-apiserver's is 60 s), while this
 * process's event loop is busy for longer (--late-ms, default 5,000: a simulator with a thousand
 * nodes in GC). The REST client then takes that connection from its pool, as the FIN has not
 * been read yet, and sends a lease PUT (update) on it. Prints how many of --rounds PUTs succeeded.
 *
 *   node dist/bench/experiments/keepalive-race.js [--rounds 3] [--keepalive-ms 2000] [--late-ms 5000]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { realClock } from '../../src/api/clock.js';
import { messageOf } from '../../src/api/errors.js';
import { createRestClient } from '../../src/agent/orchclient/index.js';
import { isMain } from '../table.js';

const SERVER = `
const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => { r.setHeader('content-type', 'application/json'); r.end('{}'); }); });
s.keepAliveTimeout = Number(process.argv[1]);
s.listen(0, '127.0.0.1', () => { process.stdout.write(String(s.address().port) + '\\n'); });`;

export async function keepAliveRace(o: { rounds: number; keepAliveMs: number; lateMs: number }): Promise<{ ok: number; failed: string[] }> {
  const server = spawn(process.execPath, ['-e', SERVER, String(o.keepAliveMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [first] = (await once(server.stdout, 'data')) as [Buffer];
    const url = `http://127.0.0.1:${first.toString().trim()}`;
    const rest = createRestClient({ connection: { server: url, insecureSkipTLSVerify: false }, clock: realClock, qps: 0, burst: 0 });
    const lease = '/apis/coordination.orch.io/v1/namespaces/node-lease/leases/n1';
    let ok = 0;
    const failed: string[] = [];
    try {
      for (let i = 0; i < o.rounds; i++) {
        await rest.get(lease);
        // A late event loop: the server's keep-alive timer runs out meanwhile, its FIN unread here.
        const until = Date.now() + o.lateMs;
        while (Date.now() < until) { /* busy */ }
        try {
          await rest.update(lease, { metadata: { name: 'n1' } });
          ok += 1;
        } catch (err) {
          failed.push(messageOf(err));
        }
      }
    } finally {
      rest.close();
    }
    return { ok, failed };
  } finally {
    server.kill();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, 'keepalive-ms': { type: 'string', default: '2000' }, 'late-ms': { type: 'string', default: '5000' } } });
  const r = await keepAliveRace({ rounds: Number(values.rounds), keepAliveMs: Number(values['keepalive-ms']), lateMs: Number(values['late-ms']) });
  process.stdout.write(`lease PUTs after a late event loop: ${r.ok} of ${r.ok + r.failed.length} succeeded${r.failed.length === 0 ? '' : `; failures: ${[...new Set(r.failed)].join('; ')}`}\n`);
}

if (isMain(import.meta.url)) {
  main().then(() => process.exit(0), (err: unknown) => {
    process.stderr.write(`keepalive-race failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
}

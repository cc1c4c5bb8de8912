/**
 * Fault suite of orch-apiserver and its storage: the server killed (kill -9) during concurrent
 * event creates on SQLite and on etcd, then started again (no acknowledged write lost); on a
 * 3-member etcd, one member killed under load (writes go on, none lost), then a second one
 * (quorum lost: writes are refused with a clear 503 or 504, not hung, not a 500).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startApiServer, eventsPath, v1Event, type ApiServer } from '../helpers/apiserver.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { reportFault } from '../helpers/faults.js';
import { waitFor } from '../helpers/wait.js';

const WRITERS = 8;

interface Load {
  /** Names whose create was acknowledged (201). */
  readonly acked: Set<string>;
  /** Refusals by status (or error code when there was no answer). */
  readonly refused: Map<string, number>;
  /** Messages of the 5xx answers. */
  readonly serverErrors: string[];
  stop(): Promise<void>;
}

/** WRITERS loops creating events until stopped; the server may come and go under them. */
function startLoad(server: () => ApiServer, prefix: string): Load {
  const acked = new Set<string>();
  const refused = new Map<string, number>();
  const serverErrors: string[] = [];
  let stopped = false;
  let n = 0;
  const count = (key: string): void => { refused.set(key, (refused.get(key) ?? 0) + 1); };
  const writer = async (): Promise<void> => {
    while (!stopped) {
      const name = `${prefix}-${n++}`;
      try {
        const res = await server().client.request('POST', eventsPath(), { body: v1Event(name) });
        if (res.status === 201) acked.add(name);
        else {
          count(String(res.status));
          if (res.status >= 500) serverErrors.push(`${res.status} ${(typeof res.body.message === 'string' ? res.body.message : res.text).slice(0, 200)}`);
        }
      } catch (err) {
        count((err as NodeJS.ErrnoException).code ?? 'error');
        // Nobody listens for a moment (the server restarts): the next try comes after a breath.
        await new Promise((resolve) => { setTimeout(resolve, 20); });
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, () => writer());
  return { acked, refused, serverErrors, stop: async () => { stopped = true; await Promise.all(writers); } };
}

/** Every event name the server holds in the default namespace. */
async function storedNames(server: ApiServer): Promise<Set<string>> {
  const res = await server.client.request('GET', eventsPath());
  assert.equal(res.status, 200, res.text);
  return new Set(((res.body.items ?? []) as { metadata: { name: string } }[]).map((e) => e.metadata.name));
}

async function killDuringWrites(server: ApiServer, storage: string): Promise<void> {
  const started = Date.now();
  const load = startLoad(() => server, storage);
  await waitFor('300 acknowledged writes', () => load.acked.size >= 300, { timeoutMs: 60_000, intervalMs: 20 });
  const pid = server.pid;
  assert.ok(pid !== undefined);
  process.kill(pid, 'SIGKILL');
  const before = load.acked.size;
  await server.resume();
  await waitFor('300 more acknowledged writes after the restart', () => load.acked.size >= before + 300, { timeoutMs: 60_000, intervalMs: 20 });
  await load.stop();
  const stored = await storedNames(server);
  const lost = [...load.acked].filter((name) => !stored.has(name));
  assert.deepEqual(lost, [], 'acknowledged writes lost');
  assert.ok(load.serverErrors.every((e) => /^50[34] /.test(e)), `5xx other than 503/504: ${load.serverErrors.join('; ')}`);
  reportFault({
    suite: `orch-apiserver kill -9 (${storage})`,
    tried: `kill -9 during ${WRITERS} concurrent writers, restart; refused ${JSON.stringify(Object.fromEntries(load.refused))}`,
    checked: load.acked.size, failures: lost.length, ms: Date.now() - started,
  });
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

void describe('faults of orch-apiserver and its storage', () => {
  void it('kill -9 of orch-apiserver during concurrent writes on SQLite: no acknowledged write lost', async () => {
    const server = await startApiServer({ storage: 'sqlite' });
    cleanups.push(() => server.stop());
    await killDuringWrites(server, 'sqlite');
  });

  void it('kill -9 of orch-apiserver during concurrent writes on etcd, then etcd members killed under load', async () => {
    const etcd: EtcdCluster = await startEtcd({ members: 3 });
    cleanups.push(() => etcd.stop());
    const server = await startApiServer({ storage: 'etcd', etcdEndpoints: etcd.endpoints });
    cleanups.push(() => server.stop());
    await killDuringWrites(server, 'etcd');

    // One member of three killed: the quorum holds, writes go on, none is lost.
    const started = Date.now();
    const load = startLoad(() => server, 'member');
    await waitFor('200 acknowledged writes', () => load.acked.size >= 200, { timeoutMs: 60_000, intervalMs: 20 });
    const [first, second] = etcd.pids().slice(-3);
    assert.ok(first !== undefined && second !== undefined);
    process.kill(first, 'SIGKILL');
    const before = load.acked.size;
    await waitFor('200 more acknowledged writes with a member down', () => load.acked.size >= before + 200, { timeoutMs: 60_000, intervalMs: 20 });
    // A second member killed: no quorum; writes are refused, clearly.
    process.kill(second, 'SIGKILL');
    await waitFor('a write refused with 503 or 504', () => load.serverErrors.length > 0, { timeoutMs: 60_000, intervalMs: 50 });
    await load.stop();
    assert.ok(load.serverErrors.every((e) => /^50[34] \S/.test(e)), `5xx other than 503/504 with a message: ${load.serverErrors.slice(0, 5).join('; ')}`);
    reportFault({
      suite: 'etcd members killed under load',
      tried: `kill -9 of 1 then 2 of 3 etcd members under ${WRITERS} writers; refused ${JSON.stringify(Object.fromEntries(load.refused))}`,
      checked: load.acked.size, failures: 0, ms: Date.now() - started,
    });
    process.stdout.write(`fault etcd members killed under load: first refusal "${load.serverErrors[0] ?? ''}"\n`);
  });
});

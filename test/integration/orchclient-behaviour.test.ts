/**
 * The REST behaviour suite (src/agent/orchclient/behaviour.ts) against a real orch-apiserver
 * on SQLite: what the FakeRestClient of the unit tests must match. One server serves every
 * case, each in a namespace of its own; the cases that compact the history use a second server
 * that compacts every 500 ms.
 */
import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import { createRestClient, loadOrchconfig, statusOf, type RestClient } from '../../src/agent/orchclient/index.js';
import { runRestBehaviour, type RestHarness } from '../../src/agent/orchclient/testing.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

interface Server {
  readonly api: ApiServer;
  readonly rest: RestClient;
}

let steady: Server;
let compacting: Server;

async function start(args: readonly string[]): Promise<Server> {
  const api = await startApiServer({ storage: 'sqlite', args });
  const connection = await loadOrchconfig(api.adminKubeconfig);
  return { api, rest: createRestClient({ clock: realClock, connection, qps: 0, burst: 0, contentType: 'application/json' }) };
}

before(async () => {
  [steady, compacting] = await Promise.all([start([]), start(['--etcd-compaction-interval=500ms'])]);
});

after(async () => {
  for (const s of [steady, compacting]) {
    s.rest.close();
    await s.api.stop();
  }
});

runRestBehaviour('orch-apiserver', async ({ compacting: compacts }) => {
  const { rest } = compacts === true ? compacting : steady;
  const namespace = `rest-${randomUUID().slice(0, 8)}`;
  await rest.create('/api/v1/namespaces', { metadata: { name: namespace } });
  // Pods need the namespace's default service account, which the server's loop makes.
  await waitFor(`the default service account of ${namespace}`, () => rest.get(`/api/v1/namespaces/${namespace}/serviceaccounts/default`).then(() => true));
  const harness: RestHarness = {
    rest,
    namespace,
    compact: async (resourceVersion) => {
      if (compacts !== true) throw new Error('compact() needs a harness made with compacting');
      // The server compacts every 500 ms to the revision it saw one interval before: writes move
      // the revision on until a read at `resourceVersion` is refused.
      await waitFor(`the history before ${resourceVersion} to be compacted`, async () => {
        await rest.create(`/api/v1/namespaces/${namespace}/configmaps`, { metadata: { generateName: 'tick-' } });
        return rest.list(`/api/v1/namespaces/${namespace}/configmaps`, { query: { resourceVersion, resourceVersionMatch: 'Exact', limit: 1 } })
          .then(() => false, (err: unknown) => statusOf(err)?.code === 410);
      }, { timeoutMs: 20_000, intervalMs: 200 });
    },
    cleanup: async () => {
      await rest.delete(`/api/v1/namespaces/${namespace}`);
    },
  };
  return harness;
});

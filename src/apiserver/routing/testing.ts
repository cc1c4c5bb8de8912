/**
 * orch-apiserver's router in process for tests (the unit lane's request tests and fuzz suite):
 * plain HTTP on a free loopback port, SQLite in a temporary directory, the namespaces, events,
 * pods, configmaps and nodes resources, a static token `admin-token` of a system:masters user,
 * and every line the router logs kept in `logs`. Requests: rawRequest of test/helpers/loopback.ts
 * (with `token: TEST_TOKEN`). Test code only.
 */
import { realClock } from '../../api/clock.js';
import { DEFAULT_WATCH_BUDGET, WatchBudget } from '../watch/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { createAuthenticator, parseTokenFile } from '../authn/index.js';
import { alwaysAllow } from '../authz/index.js';
import type { RequestGate } from '../flowcontrol/index.js';
import { ResourceRegistry } from '../registry/index.js';
import { configMapDefinition } from '../resources/configmaps/index.js';
import { eventDefinitions } from '../resources/events/index.js';
import { namespaceDefinition } from '../resources/namespaces/index.js';
import { nodeDefinition } from '../resources/nodes/index.js';
import { podDefinition } from '../resources/pods/index.js';
import { openSqliteStore } from '../storage/index.js';
import { createRouter } from './router.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

export const TEST_TOKEN = 'admin-token';

export interface TestApiServer {
  readonly port: number;
  /** Every line the router logged (it logs 5xx answers and its own failures). */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface TestApiServerOptions {
  /** The request gate (API Priority and Fairness or max-in-flight); absent: none. */
  readonly gate?: RequestGate;
}

export async function startTestApiServer(options: TestApiServerOptions = {}): Promise<TestApiServer> {
  const dir = await mkdtemp(join(syncedTmpdir(), 'apiserver-router-'));
  const store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
  const logs: string[] = [];
  const definitions = [namespaceDefinition, ...eventDefinitions({ ttlSeconds: 3600 }), podDefinition, configMapDefinition, nodeDefinition];
  const router = createRouter({
    registries: definitions.map((def) => new ResourceRegistry({ def, store })),
    authenticator: createAuthenticator({ tokens: parseTokenFile(`${TEST_TOKEN},admin,1,"system:masters"\n`, 'tokens.csv') }),
    authorizer: alwaysAllow,
    maxRequestBytes: 3 * 1024 * 1024,
    version: {
      major: '1', minor: '30', gitVersion: 'v1.30.0+orch-test', gitCommit: '', gitTreeState: 'clean', buildDate: '1970-01-01T00:00:00Z',
      goVersion: 'node', compiler: 'tsc', platform: 'linux/amd64',
    },
    ready: async () => {
      await store.currentRevision();
    },
    log: (line) => logs.push(line),
    serverAddress: '127.0.0.1:0',
    watchBudget: new WatchBudget({ ...DEFAULT_WATCH_BUDGET, clock: realClock }),
    ...(options.gate === undefined ? {} : { gate: options.gate }),
  });
  const server = createServer(router.handle);
  server.on('upgrade', router.upgrade);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    logs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { OrchError } from '../../api/errors.js';
import type { NodeagentConfiguration } from '../config/index.js';
import { LogRoot } from '../logging/index.js';
import { createAgentMetrics, startServers, type Servers } from './index.js';
import { loopbackServerConfig, servedPodRuntime } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';
import { waitFor } from '../../../test/helpers/wait.js';

const logs = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } });
const pod: NodePod = {
  metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
  spec: { containers: [{ name: 'main', image: 'busybox' }] },
};
let podStatus: Record<string, unknown> = {};
let sandboxId = '';

const call = rawRequest;

/** Sends a raw upgrade request and returns the status line and body. */
function rawUpgrade(port: number, path: string, upgrade: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\n\r\n`);
    });
    let data = '';
    socket.on('data', (d: Buffer) => { data += d.toString(); });
    socket.on('close', () => { resolve(data); });
    socket.on('error', reject);
  });
}

/** The servers' clock (the profiles' duration). */
const clock = new FakeClock();

async function start(dir: string, change: (c: NodeagentConfiguration) => void, extra: { setVerbosity?: (n: number) => void } = {}): Promise<Servers> {
  const config = await loopbackServerConfig(change);
  const runtime = await servedPodRuntime(dir);
  sandboxId = runtime.sandboxId;
  podStatus = { phase: 'Running', containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0, containerID: `containerd://${runtime.containerId}`, state: { running: {} } }] };
  return startServers({
    config, certDir: join(dir, 'pki'), rootDir: dir, nodeName: 'node1', nodeIPs: ['127.0.0.1'],
    pods: { desiredPods: () => [pod], podStatus: (uid) => (uid === 'uid-1' ? podStatus : undefined) },
    cri: runtime.cri,
    healthChecks: [{ name: 'ping', check: () => undefined }],
    logs: { setVerbosity: extra.setVerbosity ?? (() => undefined) },
    gates: { enabled: () => false },
    metrics: createAgentMetrics({ nodeName: 'node1', runtimeCounts: () => Promise.resolve({ pods: 1, containers: { running: 1 } }) }),
    logger: logs.logger('test'),
    clock,
    logDir: join(dir, 'varlog'),
  });
}

void describe('the servers in process (fake runtime)', () => {
  let dir: string;
  let servers: Servers;
  const verbosity: number[] = [];
  let port = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'servers-test-'));
    await mkdir(join(dir, 'varlog', 'sub'), { recursive: true });
    await writeFile(join(dir, 'varlog', 'syslog'), 'hello\n');
    await writeFile(join(dir, 'c1.log'), '2024-05-01T10:00:00Z stdout F one\n2024-05-01T10:00:01Z stderr F two\n');
    servers = await start(dir, () => undefined, { setVerbosity: (n) => verbosity.push(n) });
    port = servers.secure?.port ?? 0;
  });
  after(async () => {
    await servers.close();
    await rm(dir, { recursive: true, force: true });
  });

  void it('serves pods, running pods, the summary, metrics, configz and logs on the secure port', async () => {
    const pods = JSON.parse((await call(port, '/pods', { tls: true })).body) as { kind: string; items: Pod[] };
    assert.equal(pods.kind, 'PodList');
    assert.equal(pods.items[0]?.status?.phase, 'Running');
    const before = podStatus;
    podStatus = { ...podStatus, phase: 'Succeeded' };
    assert.equal((JSON.parse((await call(port, '/pods', { tls: true })).body) as { items: Pod[] }).items[0]?.status?.phase, 'Succeeded', 'a new status object is encoded again');
    podStatus = before;
    const running = JSON.parse((await call(port, '/runningpods/', { tls: true })).body) as { items: Pod[] };
    assert.deepEqual(running.items[0]?.spec?.containers.map((c) => c.name), ['main', sandboxId]);
    const summary = JSON.parse((await call(port, '/stats/summary', { tls: true })).body) as { node: { nodeName: string; runtime: { imageFs: { usedBytes: number } } }; pods: { containers: { memory: { workingSetBytes: number } }[] }[] };
    assert.equal(summary.node.nodeName, 'node1');
    assert.equal(summary.node.runtime.imageFs.usedBytes, 123);
    assert.equal(summary.pods[0]?.containers[0]?.memory.workingSetBytes, 4096);
    assert.match((await call(port, '/metrics', { tls: true })).body, /nodeagent_node_name\{node="node1"\} 1/);
    assert.match((await call(port, '/metrics', { tls: true })).body, /nodeagent_running_containers\{container_state="running"\} 1/);
    assert.match((await call(port, '/metrics/resource', { tls: true })).body, /container_memory_working_set_bytes\{container="main",namespace="default",pod="web"\} 4096/);
    assert.equal((await call(port, '/metrics/probes', { tls: true })).status, 200);
    const configz = JSON.parse((await call(port, '/configz', { tls: true })).body) as { nodeagentconfig: { kind: string; port: number } };
    assert.equal(configz.nodeagentconfig.kind, 'NodeagentConfiguration');
    assert.equal(configz.nodeagentconfig.port, port);
    assert.equal((await call(port, '/containerLogs/default/web/main?tailLines=1', { tls: true })).body, 'two\n');
    assert.equal((await call(port, '/containerLogs/default/web/nope', { tls: true })).status, 404);
    assert.equal((await call(port, '/containerLogs/default/nope/main', { tls: true })).status, 404);
    assert.equal((await call(port, '/containerLogs/default/web/main?tailLines=x', { tls: true })).status, 400);
    assert.equal((await call(port, '/containerLogs/default/web/main?tailLines=-1', { tls: true })).status, 422);
    const listing = await call(port, '/logs/', { tls: true });
    assert.equal(listing.body, '<pre>\n<a href="sub/">sub/</a>\n<a href="syslog">syslog</a>\n</pre>\n');
    assert.equal((await call(port, '/logs/syslog', { tls: true })).body, 'hello\n');
    assert.equal((await call(port, '/logs/sub', { tls: true })).headers.location, 'sub/');
    assert.equal((await call(port, '/logs/%2e%2e/etc/passwd', { tls: true })).status, 400);
    assert.equal((await call(port, '/run/default/web/main?cmd=echo%20out', { method: 'POST', tls: true })).body, 'out\n');
  });

  void it('answers unknown paths, wrong methods and bad requests as upstream', async () => {
    assert.deepEqual([(await call(port, '/nope', { tls: true })).status, (await call(port, '/stats/', { tls: true })).status], [404, 404]);
    const wrong = await call(port, '/pods', { method: 'POST', tls: true });
    assert.deepEqual([wrong.status, wrong.headers.allow], [405, 'GET']);
    assert.equal((await call(port, '/run/default/web/main', { tls: true })).status, 405);
    const plain = await call(port, '/exec/default/web/main?command=ls&stdout=1', { tls: true });
    assert.deepEqual([plain.status, plain.body], [400, 'Upgrade request required']);
    assert.equal((await call(port, '/exec/default/web/main?command=ls', { tls: true })).status, 400);
    assert.equal((await call(port, '/exec/default/nope/main?command=ls&stdout=1', { tls: true })).status, 404);
    assert.equal((await call(port, '/portForward/default/web?port=abc', { tls: true })).status, 400, 'a plain request is not a stream');
    // SPDY is relayed to the runtime's streaming server (the fake's URL has nobody listening).
    const spdy = await rawUpgrade(port, '/exec/default/web/main?command=ls&stdout=1', 'SPDY/3.1');
    assert.match(spdy, /^HTTP\/1\.1 500 Internal Server Error/);
    assert.match(spdy, /error dialing the runtime's streaming server/);
    const badPort = await rawUpgrade(port, '/portForward/default/web?port=0', 'websocket');
    assert.match(badPort, /^HTTP\/1\.1 400 .*\r\n[\s\S]*port "0" must be > 0/);
  });

  void it('changes the verbosity, and profiles', async () => {
    const put = await call(port, '/debug/flags/v', { method: 'PUT', body: '5', tls: true });
    assert.deepEqual([put.status, put.body, verbosity], [200, 'successfully set logging.verbosity to 5', [5]]);
    assert.equal((await call(port, '/debug/flags/v', { tls: true })).status, 406);
    assert.equal((await call(port, '/debug/flags/v', { method: 'PUT', body: 'five', tls: true })).status, 400);
    assert.match((await call(port, '/debug/pprof/', { tls: true })).body, /href="profile"/);
    assert.equal((await call(port, '/debug/pprof/cmdline', { tls: true })).body, process.argv.join('\x00'));
    assert.deepEqual([(await call(port, '/debug/pprof/block', { tls: true })).status, (await call(port, '/debug/pprof/goroutine', { tls: true })).status], [404, 404]);
    assert.equal((await call(port, '/debug/pprof/profile?seconds=abc', { tls: true })).status, 400);
    // The profile lasts `seconds` on the agent's clock: the test moves it once the profile runs.
    const answer = call(port, '/debug/pprof/profile?seconds=2', { tls: true });
    await waitFor('the profile to start', () => clock.pending().some((t) => t.delayMs === 2000));
    await clock.advance(2000);
    const profile = JSON.parse((await answer).body) as { nodes: unknown[]; startTime: number };
    assert.ok(profile.nodes.length > 0);
  });

  void it('keeps the read-only port to read endpoints and the health port to /healthz', async () => {
    const ro = servers.readOnly?.port ?? 0;
    assert.equal((await call(ro, '/pods')).status, 200);
    assert.equal((await call(ro, '/healthz')).body, 'ok');
    for (const p of ['/exec/default/web/main?command=ls&stdout=1', '/run/default/web/main', '/containerLogs/default/web/main', '/logs/', '/debug/pprof/', '/runningpods/', '/attach/a/b/c', '/portForward/a/b']) {
      const r = await call(ro, p, { method: p.startsWith('/run') ? 'POST' : 'GET' });
      assert.deepEqual([r.status, r.body], [405, 'Debug endpoints are disabled.\n'], p);
    }
    assert.deepEqual([(await call(ro, '/configz')).status, (await call(ro, '/debug/flags/v', { method: 'PUT', body: '1' })).status], [404, 404]);
    const hz = servers.healthz?.port ?? 0;
    assert.deepEqual([(await call(hz, '/healthz')).body, (await call(hz, '/healthz/ping')).body, (await call(hz, '/pods')).status], ['ok', 'ok', 404]);
  });

  void it('answers 405 for disabled handlers, and 401 without anonymous requests', async () => {
    const off = await start(dir, (c) => {
      c.enableSystemLogHandler = false;
      c.enableProfilingHandler = false;
      c.enableDebugFlagsHandler = false;
      c.authentication.anonymous.enabled = false;
      c.readOnlyPort = 0;
      c.healthzPort = 0;
    });
    try {
      const p = off.secure?.port ?? 0;
      assert.deepEqual([(await call(p, '/pods', { tls: true })).status, (await call(p, '/pods', { tls: true })).body], [401, 'Unauthorized']);
      assert.equal(off.readOnly, undefined);
    } finally {
      await off.close();
    }
    const noDebug = await start(dir, (c) => {
      c.enableSystemLogHandler = false;
      c.enableProfilingHandler = false;
      c.enableDebugFlagsHandler = false;
      c.readOnlyPort = 0;
      c.healthzPort = 0;
    });
    try {
      const p = noDebug.secure?.port ?? 0;
      assert.deepEqual([(await call(p, '/logs/', { tls: true })).status, (await call(p, '/logs/', { tls: true })).body], [405, 'logs endpoint is disabled.\n']);
      assert.equal((await call(p, '/debug/pprof/', { tls: true })).body, 'profiling endpoint is disabled.\n');
      assert.equal((await call(p, '/debug/flags/v', { method: 'PUT', tls: true })).body, 'flags endpoint is disabled.\n');
    } finally {
      await noDebug.close();
    }
  });

  void it('needs the API server for webhook authentication or authorization', async () => {
    await assert.rejects(start(dir, (c) => { c.authorization.mode = 'Webhook'; }), (err: unknown) => err instanceof OrchError && err.code === 'SERVER_CONFIG_INVALID');
    await assert.rejects(start(dir, (c) => { c.authentication.webhook.enabled = true; }), /needs the API server/);
    // Nothing was left listening.
    await new Promise<void>((resolve, reject) => {
      const s = connect(servers.secure?.port ?? 0, '127.0.0.1', () => { s.destroy(); resolve(); });
      s.on('error', reject);
    });
  });
});

/**
 * Every read endpoint of the agent's servers on a node running real containers: the real
 * nodeagent binary on a private containerd with static pods (a pod printing known log lines,
 * one printing a line a second, one crashing), clients authenticated by a client certificate
 * (Node's https and curl). /healthz on the three ports, /pods, /runningpods/, /stats/summary,
 * /metrics*, /spec/, /logs/ (and the node log query), /containerLogs with its parameters,
 * /configz against `nodeagent config print`, /debug/flags/v, /debug/pprof/, and the read-only
 * port's refusals.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { NODEAGENT_BIN, startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, podManifest, writeManifest } from '../helpers/pods.js';
import { createTestPki, curl, httpsCall, type HttpsAnswer, type TestClientCert, type TestPki } from '../helpers/review-server.js';
import { waitFor } from '../helpers/wait.js';

const execFileAsync = promisify(execFile);
let containerd: ContainerdInstance;
let pki: TestPki;
let client: TestClientCert;
let manifests: string;
let rootDir: string;
let agent: AgentProcess;
let args: string[];
let port: number;
let readOnlyPort: number;
let healthzPort: number;
const varLogFile = `/var/log/nodeagent-server-test-${process.pid}.log`;
/** A directory of this test's own under /var/log (a fresh machine has no /var/log/pods yet). */
const varLogDir = `/var/log/nodeagent-server-test-${process.pid}.d`;

const get = (path: string, extra: { method?: string; body?: string } = {}): Promise<HttpsAnswer> =>
  httpsCall({ port, path, cert: client.certPem, key: client.keyPem, ...extra });
const curlArgs = (): string[] => ['-k', '--cert', client.certFile, '--key', client.keyFile];

async function podList(): Promise<Pod[]> {
  return (JSON.parse((await get('/pods')).body) as { items: Pod[] }).items;
}

before(async () => {
  containerd = await startContainerd();
  pki = await createTestPki();
  client = await pki.client('tester', ['testers']);
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
  const image = containerd.images.busybox;
  await writeManifest(manifests, 'lines.yaml', podManifest({ name: 'lines', image, hostNetwork: true, command: 'for i in 1 2 3 4 5; do echo line $i; done; sleep 1; echo oops >&2; exec sleep 3600' }));
  await writeManifest(manifests, 'ticker.yaml', podManifest({ name: 'ticker', image, hostNetwork: true, command: 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done' }));
  await writeManifest(manifests, 'crash.yaml', podManifest({ name: 'crash', image, hostNetwork: true, command: 'echo attempt; exit 1' }));
  await writeFile(varLogFile, 'from /var/log\n');
  await mkdir(varLogDir, { recursive: true });
  [port, readOnlyPort, healthzPort] = await Promise.all([freePort(), freePort(), freePort()]);
  args = [
    `--hostname-override=${NODE}`, `--port=${port}`, `--read-only-port=${readOnlyPort}`, `--healthz-port=${healthzPort}`,
    `--client-ca-file=${pki.caFile}`, '--anonymous-auth=false', '--authorization-mode=AlwaysAllow',
  ];
  agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args });
  await waitFor('the pods to run', async () => {
    const pods = await podList();
    return pods.length === 3 && pods.filter((p) => p.status?.phase === 'Running').length >= 2;
  }, { timeoutMs: 30_000, intervalMs: 200 });
});

after(async () => {
  await agent.stop();
  await containerd.stop();
  await rm(varLogFile, { force: true });
  await rm(varLogDir, { recursive: true, force: true });
  await rm(manifests, { recursive: true, force: true });
  await rm(rootDir, { recursive: true, force: true });
  await rm(pki.dir, { recursive: true, force: true });
});

void describe('the endpoints of the secure port', () => {
  void it('answers /healthz and its checks on the secure, read-only and health ports', async () => {
    assert.deepEqual(await curl([...curlArgs(), `https://127.0.0.1:${port}/healthz`]), { status: 200, body: 'ok' });
    assert.equal((await get('/healthz?verbose')).body, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n');
    for (const check of ['ping', 'log', 'syncloop']) assert.equal((await get(`/healthz/${check}`)).body, 'ok');
    assert.equal((await get('/healthz/nope')).status, 404);
    assert.deepEqual(await curl([`http://127.0.0.1:${readOnlyPort}/healthz`]), { status: 200, body: 'ok' });
    assert.deepEqual(await curl([`http://127.0.0.1:${healthzPort}/healthz/syncloop`]), { status: 200, body: 'ok' });
    assert.equal((await curl([`http://127.0.0.1:${healthzPort}/pods`])).status, 404);
  });

  void it('lists the pods with their statuses, and what the runtime runs', async () => {
    const pods = await podList();
    const lines = pods.find((p) => p.metadata?.name === `lines-${NODE}`)!;
    assert.equal(lines.status?.phase, 'Running');
    assert.match(lines.status.containerStatuses?.at(0)?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/);
    assert.equal(lines.spec?.containers.at(0)?.name, 'main');
    const running = JSON.parse((await get('/runningpods/')).body) as { kind: string; items: Pod[] };
    assert.equal(running.kind, 'PodList');
    const r = running.items.find((p) => p.metadata?.name === `lines-${NODE}`)!;
    assert.equal(r.metadata?.uid, lines.metadata?.uid);
    assert.equal(r.metadata?.namespace, 'default');
    const names = r.spec?.containers.map((c) => c.name) ?? [];
    assert.equal(names[0], 'main');
    assert.match(names[1] ?? '', /^[0-9a-f]{64}$/, 'the sandbox, named by its ID');
  });

  void it('serves the summary (cached for a while) and answers 404 for /stats/', async () => {
    type Summary = { node: { nodeName: string; cpu: { usageCoreNanoSeconds: number }; memory: { workingSetBytes: number }; fs: { capacityBytes: number }; runtime: { imageFs: { usedBytes: number; capacityBytes: number } } }; pods: { podRef: { name: string }; containers: { name: string; cpu?: { usageCoreNanoSeconds: number }; memory?: { workingSetBytes: number } }[] }[] };
    const s = JSON.parse((await get('/stats/summary')).body) as Summary;
    assert.equal(s.node.nodeName, NODE);
    assert.ok(s.node.cpu.usageCoreNanoSeconds > 0 && s.node.memory.workingSetBytes > 0 && s.node.fs.capacityBytes > 0);
    assert.ok(s.node.runtime.imageFs.capacityBytes > 0 && s.node.runtime.imageFs.usedBytes >= 0);
    const ticker = s.pods.find((p) => p.podRef.name === `ticker-${NODE}`)!;
    const main = ticker.containers.at(0)!;
    assert.equal(main.name, 'main');
    assert.ok((main.cpu?.usageCoreNanoSeconds ?? 0) > 0);
    assert.ok((main.memory?.workingSetBytes ?? 0) > 0);
    const again = await curl([...curlArgs(), '-X', 'POST', `https://127.0.0.1:${port}/stats/summary?only_cpu_and_memory=true`]);
    const small = JSON.parse(again.body) as Summary;
    assert.equal(small.node.cpu.usageCoreNanoSeconds, s.node.cpu.usageCoreNanoSeconds, 'from the same cached snapshot');
    assert.equal(small.node.fs, undefined);
    assert.deepEqual([(await get('/stats/')).status, (await get('/stats/container')).status], [404, 404]);
  });

  void it('exposes the agent metrics, the container metrics and the probe registry', async () => {
    const m = (await get('/metrics')).body;
    assert.match(m, new RegExp(`^nodeagent_node_name\\{node="${NODE}"\\} 1$`, 'm'));
    assert.match(m, /^nodeagent_running_pods 3$/m);
    assert.match(m, /^nodeagent_running_containers\{container_state="running"\} [23]$/m);
    assert.match(m, /^nodeagent_pod_start_duration_seconds_count [1-9]/m);
    assert.match(m, /^process_resident_memory_bytes \d+/m);
    assert.match(m, /^nodeagent_http_requests_total\{method="GET",path="pods",server_type="readwrite",long_running="false"\} \d+/m);
    const cadvisor = (await get('/metrics/cadvisor')).body;
    assert.match(cadvisor, new RegExp(`^container_cpu_usage_seconds_total\\{container="main",id="/[0-9a-f]+",image="[^"]*",name="[0-9a-f]+",namespace="default",pod="ticker-${NODE}",cpu="total"\\} [0-9.e-]+ \\d+$`, 'm'));
    assert.match(cadvisor, new RegExp(`^container_memory_working_set_bytes\\{container="main",.*pod="ticker-${NODE}"\\} \\d+ \\d+$`, 'm'));
    const resource = (await get('/metrics/resource')).body;
    assert.match(resource, /^node_cpu_usage_seconds_total [0-9.]+ \d+$/m);
    assert.match(resource, /^node_memory_working_set_bytes \d+ \d+$/m);
    assert.match(resource, new RegExp(`^pod_cpu_usage_seconds_total\\{namespace="default",pod="ticker-${NODE}"\\} [0-9.e-]+ \\d+$`, 'm'));
    assert.match(resource, new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="default",pod="lines-${NODE}"\\} \\d+ \\d+$`, 'm'));
    const probes = await get('/metrics/probes');
    assert.deepEqual([probes.status, probes.headers['content-type']], [200, 'text/plain; version=0.0.4; charset=utf-8']);
  });

  void it('describes the machine on /spec/', async () => {
    const spec = JSON.parse((await get('/spec/')).body) as Record<string, unknown>;
    assert.ok(typeof spec.num_cores === 'number' && spec.num_cores > 0);
    assert.ok(typeof spec.memory_capacity === 'number' && spec.memory_capacity > 0);
    assert.match(String(spec.boot_id), /^[0-9a-f-]{36}$/);
    assert.equal(typeof spec.machine_id, 'string');
  });

  void it('serves /var/log, refusing paths that leave it', async () => {
    const listing = await get('/logs/');
    assert.match(listing.body, /^<pre>\n/);
    const name = varLogFile.slice('/var/log/'.length);
    const dirName = varLogDir.slice('/var/log/'.length);
    assert.ok(listing.body.includes(`<a href="${dirName}/">${dirName}/</a>`), listing.body);
    assert.deepEqual(await curl([...curlArgs(), `https://127.0.0.1:${port}/logs/${name}`]), { status: 200, body: 'from /var/log\n' });
    assert.equal((await curl([...curlArgs(), '--path-as-is', `https://127.0.0.1:${port}/logs/../etc/passwd`])).status, 400);
    assert.equal((await get('/logs/%2e%2e/etc/passwd')).status, 400);
    assert.equal((await get(`/logs/${dirName}`)).headers.location, `${dirName}/`);
    assert.match((await get('/logs/?query=kubelet')).body, /^<pre>\n/, 'without the NodeLogQuery gate a query is ignored');
  });

  void it('serves container logs with tailLines, limitBytes, timestamps, since, previous and follow', async () => {
    const logs = (q: string): Promise<HttpsAnswer> => get(`/containerLogs/default/lines-${NODE}/main${q}`);
    // stdout comes first, stderr a second later (the two streams are not ordered otherwise).
    const all = await waitFor('the whole log', async () => { const b = (await logs('')).body; return b.includes('oops') ? b : undefined; });
    assert.equal(all, 'line 1\nline 2\nline 3\nline 4\nline 5\noops\n');
    assert.equal((await logs('?tailLines=2')).body, 'line 5\noops\n');
    assert.equal((await logs('?tail=1')).body, 'oops\n');
    assert.equal((await logs('?limitBytes=9')).body, 'line 1\nli');
    assert.match((await logs('?timestamps=true&tailLines=1')).body, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z oops\n$/);
    assert.equal((await logs(`?sinceTime=${new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z')}`)).body, '');
    assert.equal((await logs('?sinceSeconds=3600')).body.split('\n').length, 7);
    assert.deepEqual(await curl([...curlArgs(), `https://127.0.0.1:${port}/containerLogs/default/lines-${NODE}/main?tailLines=abc`]).then((r) => r.status), 400);
    for (const q of ['?tailLines=-1', '?limitBytes=0', '?sinceSeconds=0', '?sinceSeconds=1&sinceTime=2024-01-01T00:00:00Z']) assert.equal((await logs(q)).status, 422, q);
    assert.deepEqual([(await get('/containerLogs/default/nope/main')).status, (await get(`/containerLogs/default/lines-${NODE}/nope`)).status], [404, 404]);
    assert.match((await logs('?previous=true')).body, /previous terminated container "main" in pod "lines-testnode" not found/);
    await waitFor('a restart of the crashing pod', async () => ((await podList()).find((p) => p.metadata?.name === `crash-${NODE}`)?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, { timeoutMs: 30_000, intervalMs: 200 });
    const previous = await get(`/containerLogs/default/crash-${NODE}/main?previous=true`);
    assert.equal(previous.body, 'attempt\n');
  });

  void it('follows a container log as it grows', async () => {
    const r = await new Promise<string>((resolve, reject) => {
      let text = '';
      const req = httpsRequest({ host: '127.0.0.1', port, path: `/containerLogs/default/ticker-${NODE}/main?follow=true&tailLines=1`, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false }, (res) => {
        res.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.split('\n').length > 3) { req.destroy(); resolve(text); }
        });
      });
      req.on('error', (err) => { if (text === '') reject(err); });
      req.end();
    });
    const ticks = r.split('\n').filter((l) => l !== '').map((l) => Number(/^tick (\d+)$/.exec(l)?.[1]));
    assert.ok(ticks.length >= 3 && ticks.every((t, i) => i === 0 || t === (ticks[i - 1] ?? 0) + 1), r);
  });

  void it('shows the configuration on /configz as `nodeagent config print` prints it', async () => {
    const configz = JSON.parse((await get('/configz')).body) as { nodeagentconfig: Record<string, unknown> };
    const { stdout } = await execFileAsync(NODEAGENT_BIN, ['config', 'print', '-o', 'json', ...agent.args]);
    assert.deepEqual(configz.nodeagentconfig, JSON.parse(stdout));
    assert.equal(configz.nodeagentconfig.port, port);
  });

  void it('changes the log verbosity on PUT /debug/flags/v', async () => {
    await curl(['-k', `https://127.0.0.1:${port}/pods?before`]);
    const put = await curl([...curlArgs(), '-X', 'PUT', '--data', '2', `https://127.0.0.1:${port}/debug/flags/v`]);
    assert.deepEqual(put, { status: 200, body: 'successfully set logging.verbosity to 2' });
    await curl(['-k', `https://127.0.0.1:${port}/pods?after`]);
    await agent.waitForLog('Unable to authenticate the request path="/pods"');
    assert.equal(agent.logs().split('Unable to authenticate').length - 1, 1, 'only the request after the change is logged at level 2');
    assert.equal((await get('/debug/flags/v')).status, 406);
    assert.equal((await get('/debug/flags/v', { method: 'PUT', body: 'x' })).status, 400);
    await get('/debug/flags/v', { method: 'PUT', body: '0' });
  });

  void it('profiles the agent on /debug/pprof/', async () => {
    assert.match((await get('/debug/pprof/')).body, /<a href="profile">profile<\/a>/);
    const profile = JSON.parse((await get('/debug/pprof/profile?seconds=1')).body) as { nodes: { callFrame: { functionName: string } }[]; startTime: number; endTime: number };
    assert.ok(profile.nodes.length > 1 && profile.endTime > profile.startTime);
    const heap = await get('/debug/pprof/heap');
    assert.equal(heap.status, 200);
    assert.match(heap.body.slice(0, 100), /^\{"snapshot":\{"meta":/);
    assert.deepEqual([(await get('/debug/pprof/profile?seconds=-1')).status, (await get('/debug/pprof/block')).status, (await get('/debug/pprof/goroutine')).status], [400, 404, 404]);
  });
});

void describe('the read-only port', () => {
  void it('serves the read endpoints without authentication and refuses the others', async () => {
    const base = `http://127.0.0.1:${readOnlyPort}`;
    const pods = await curl([`${base}/pods`]);
    assert.equal(pods.status, 200);
    assert.equal((JSON.parse(pods.body) as { items: unknown[] }).items.length, 3);
    for (const p of ['/stats/summary', '/metrics', '/metrics/cadvisor', '/metrics/resource', '/spec/']) assert.equal((await curl([`${base}${p}`])).status, 200, p);
    for (const [method, p] of [['POST', `/run/default/lines-${NODE}/main?cmd=ls`], ['GET', `/exec/default/lines-${NODE}/main?command=ls&stdout=1`], ['GET', `/attach/default/lines-${NODE}/main?stdout=1`],
      ['GET', `/portForward/default/lines-${NODE}?port=80`], ['GET', `/containerLogs/default/lines-${NODE}/main`], ['GET', '/runningpods/'], ['GET', '/logs/'], ['GET', '/debug/pprof/']] as const) {
      assert.deepEqual(await curl(['-X', method, `${base}${p}`]), { status: 405, body: 'Debug endpoints are disabled.\n' }, p);
    }
    assert.deepEqual([(await curl([`${base}/configz`])).status, (await curl(['-X', 'PUT', '--data', '3', `${base}/debug/flags/v`])).status, (await curl(['-X', 'POST', `${base}/pods`])).status], [404, 404, 405]);
  });
});

void describe('the node log query', () => {
  void it('reads a service log from /var/log with enableSystemLogQuery and the NodeLogQuery gate', async () => {
    await agent.stop();
    const config = join(rootDir, 'config.yaml');
    await writeFile(config, [
      'apiVersion: nodeagent.config.orch.io/v1beta1', 'kind: NodeagentConfiguration', 'enableSystemLogQuery: true', 'featureGates: {NodeLogQuery: true}',
      'authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}', 'authorization: {mode: AlwaysAllow}', '',
    ].join('\n'));
    agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir, args: [`--config=${config}`, ...args] });
    const service = varLogFile.slice('/var/log/'.length).replace(/\.log$/, '');
    assert.deepEqual(await curl([...curlArgs(), `https://127.0.0.1:${port}/logs/?query=${service}`]), { status: 200, body: 'from /var/log\n' });
    assert.equal((await get(`/logs/?query=/${service}.log`)).body, 'from /var/log\n');
    assert.equal((await get('/logs/?query=x&tailLines=abc')).status, 400);
    assert.equal((await get('/logs/?query=a/b&query=c')).status, 406);
    assert.equal((await get('/logs/pods?query=x')).status, 406);
    assert.match((await get('/logs/')).body, /^<pre>\n/);
  });
});

/**
 * A real kubectl (/usr/bin/kubectl, on these machines a dispatcher that runs the kubectl minor
 * matching the server's /version) against a real orch-apiserver with the admin orchconfig it
 * wrote: create -f, get (tables, -o json), describe, patch (strategic, merge, json), get -w and
 * delete. A missing kubectl fails the test.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventsPath, startApiServer, v1Event, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

const KUBECTL = '/usr/bin/kubectl';

const EVENT_YAML = `apiVersion: events.orch.io/v1
kind: Event
metadata:
  name: k1
  labels: {source: kubectl}
eventTime: "2024-05-01T10:00:00.000001Z"
reportingController: orch.io/kubectl-test
reportingInstance: test-1
action: Testing
reason: KubectlTested
note: created by kubectl
type: Warning
regarding: {kind: Pod, name: web-1, namespace: default}
`;

void describe('kubectl against orch-apiserver', () => {
  let server: ApiServer;
  let home: string;
  before(async () => {
    if (!existsSync(KUBECTL)) throw new Error(`${KUBECTL} is missing: install kubectl (the tests need a real kubectl binary)`);
    server = await startApiServer({ storage: 'sqlite' });
    home = join(server.dir, 'home');
    mkdirSync(home);
  });
  after(async () => {
    await server.stop();
  });
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, HOME: home, KUBECONFIG: server.adminKubeconfig });
  const kubectl = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      execFile(KUBECTL, args, { env: env(), timeout: 60_000 }, (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`kubectl ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve({ stdout, stderr });
      });
    });

  void it('creates from a file and gets it back as a table, as JSON and described', async () => {
    const file = join(server.dir, 'event.yaml');
    writeFileSync(file, EVENT_YAML);
    assert.match((await kubectl('create', '-f', file)).stdout, /^event\.events\.orch\.io\/k1 created$/m);
    const table = (await kubectl('get', 'events')).stdout;
    assert.match(table, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    assert.match(table, /Warning\s+KubectlTested\s+pod\/web-1\s+created by kubectl/);
    const json = JSON.parse((await kubectl('get', 'events.v1.events.orch.io', 'k1', '-o', 'json')).stdout) as Record<string, unknown>;
    assert.equal(json.reportingController, 'orch.io/kubectl-test');
    const all = (await kubectl('get', 'ev', '-A', '-l', 'source=kubectl')).stdout;
    assert.match(all, /^default\s+/m);
    const described = (await kubectl('describe', 'event', 'k1')).stdout;
    assert.match(described, /^Name:\s+k1$/m);
    assert.match(described, /^Reason:\s+KubectlTested$/m);
    assert.match(described, /^Message:\s+created by kubectl$/m);
    const ns = (await kubectl('get', 'namespaces')).stdout;
    assert.match(ns, /^orch-system\s+Active\s+/m);
  });

  void it('patches with strategic (default), merge and json patches', async () => {
    assert.match((await kubectl('patch', 'event', 'k1', '-p', '{"message":"strategic"}')).stdout, /event\/k1 patched/);
    await kubectl('patch', 'event', 'k1', '--type=merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}');
    await kubectl('patch', 'events.events.orch.io', 'k1', '--type=json', '-p', '[{"op":"add","path":"/series","value":{"count":2,"lastObservedTime":"2024-05-01T10:01:00Z"}}]');
    const res = await server.client.request('GET', `${eventsPath()}/k1`);
    assert.equal(res.body.note, 'strategic');
    assert.equal(((res.body.metadata as Record<string, unknown>).labels as Record<string, string>).merged, 'yes');
    assert.equal((res.body.series as Record<string, unknown>).count, 2);
  });

  void it('watches with get -w: the current events, then new ones', async () => {
    const child = spawn(KUBECTL, ['get', 'events', '-w'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => {
      resolve();
    }));
    try {
      await waitFor('kubectl get -w to print the current event', () => /KubectlTested/.test(out) || (child.exitCode !== null ? Promise.reject(new Error(err)) : false), { timeoutMs: 30_000 });
      assert.equal((await server.client.request('POST', eventsPath(), { body: v1Event('k2', { reason: 'WatchedLater' }) })).status, 201);
      await waitFor('kubectl get -w to print the new event', () => /WatchedLater/.test(out), { timeoutMs: 30_000 });
      assert.match(out.split('\n')[0] ?? '', /^LAST SEEN\s+TYPE\s+REASON/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  void it('deletes and waits for the deletion', async () => {
    assert.match((await kubectl('delete', 'event', 'k1')).stdout, /^event "k1" deleted$/m);
    assert.match((await kubectl('delete', 'events.events.orch.io', 'k2')).stdout, /^event\.events\.orch\.io "k2" deleted$/m);
    assert.equal((await server.client.request('GET', `${eventsPath()}/k1`)).status, 404);
    await assert.rejects(kubectl('get', 'event', 'k1'), /NotFound|not found/);
  });
});

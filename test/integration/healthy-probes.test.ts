/**
 * Probes on real containers (test/integration/healthy-harness.ts composes the modules): each
 * kind (exec, httpGet over HTTP and HTTPS, tcpSocket, grpc) with its outcomes, readiness
 * driving the Ready conditions both ways, liveness kills with the probe's grace period and the
 * restart policy deciding what follows, startup probes holding the others back,
 * initialDelaySeconds, exec timeouts, the Unhealthy and Killing events, and the metrics.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { healthCodec, HEALTH_CHECK_METHOD, type ServingStatus } from '../../src/agent/prober/index.js';
import { freePort } from '../helpers/containerd.js';
import { conditionOf, containerStatus, startHealthyNode, type HealthyNode } from './healthy-harness.js';

const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.2; done';

void describe('probes on real containers', { timeout: 300_000 }, () => {
  let node: HealthyNode;
  let busybox = '';
  before(async () => {
    node = await startHealthyNode();
    busybox = node.ctrd.images.busybox;
  });
  after(async () => {
    await node.stop();
  });

  void it('httpGet readiness (port by name, path) drives ready, ContainersReady and Ready both ways', async () => {
    const pod = node.pod('http-ready', {
      containers: [{
        name: 'web', image: busybox, ports: [{ name: 'http', containerPort: 8080 }],
        command: ['sh', '-c', 'mkdir -p /www && echo ok > /www/ready && exec httpd -f -p 8080 -h /www'],
        readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
      }],
    });
    node.run(pod);
    let s = await node.waitStatus(pod, 'Ready', (x) => conditionOf(x, 'Ready') === 'True');
    assert.equal(conditionOf(s, 'ContainersReady'), 'True');
    assert.equal(containerStatus(s, 'web')?.ready, true);
    await node.exec(pod, 'web', ['rm', '/www/ready']);
    const removed = Date.now();
    s = await node.waitStatus(pod, 'not Ready', (x) => conditionOf(x, 'Ready') === 'False');
    assert.ok(Date.now() - removed < 4000, `unready after ${Date.now() - removed} ms`);
    assert.deepEqual([conditionOf(s, 'ContainersReady'), containerStatus(s, 'web')?.ready, s.phase], ['False', false, 'Running']);
    assert.match(s.conditions?.find((c) => c.type === 'Ready')?.message ?? '', /containers with unready status: \[web\]/);
    assert.ok(node.eventsOf(pod).includes('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 404'), node.eventsOf(pod).join('\n'));
    await node.exec(pod, 'web', ['sh', '-c', 'echo ok > /www/ready']);
    await node.waitStatus(pod, 'Ready again', (x) => conditionOf(x, 'Ready') === 'True');
    const metrics = await node.metrics.registry.metrics();
    assert.match(metrics, /nodeagent_prober_probe_total\{probe_type="Readiness",result="failed",container="web",pod="http-ready",namespace="healthy"\} [1-9]/);
    assert.match(metrics, /nodeagent_prober_probe_duration_seconds_count\{probe_type="Readiness",container="web",pod="http-ready",namespace="healthy"\} [1-9]/);
    node.remove(pod);
  });

  void it('exec liveness failure: Unhealthy, Killing with the probe grace period, a restart, and probing resumes', async () => {
    const pod = node.pod('exec-live', {
      terminationGracePeriodSeconds: 60,
      containers: [{
        name: 'app', image: busybox,
        command: ['sh', '-c', 'trap "" TERM; touch /tmp/healthy; while true; do sleep 0.2; done'],
        livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 1 },
      }],
    });
    node.run(pod);
    await node.waitStatus(pod, 'running', (x) => containerStatus(x, 'app')?.state?.running !== undefined);
    await node.exec(pod, 'app', ['rm', '/tmp/healthy']);
    const broken = Date.now();
    const s = await node.waitStatus(pod, 'restarted', (x) => containerStatus(x, 'app')?.restartCount === 1 && containerStatus(x, 'app')?.state?.running !== undefined, 30_000);
    assert.ok(Date.now() - broken < 15_000, `restarted after ${Date.now() - broken} ms: the probe's grace period (1 s, at least 2 s), not the pod's 60 s`);
    assert.equal(containerStatus(s, 'app')?.lastState?.terminated?.exitCode, 137, 'TERM ignored: killed');
    const events = node.eventsOf(pod);
    const unhealthy = events.findIndex((e) => e.startsWith('Unhealthy: Liveness probe failed: cat: can\'t open \'/tmp/healthy\''));
    const killing = events.indexOf('Killing: Container app failed liveness probe, will be restarted');
    assert.ok(unhealthy >= 0 && killing > unhealthy, events.join('\n'));
    assert.ok(node.logs.some((l) => l.includes('killing container') && l.includes('gracePeriodSeconds=2')), 'StopContainer got the probe grace period (raised to the 2 s minimum)');
    const before = node.eventsOf(pod).length;
    await node.waitStatus(pod, 'more healthy probes', () => true);
    const again = await node.exec(pod, 'app', ['cat', '/tmp/healthy']);
    assert.equal(again.exitCode, 0, 'the new instance is healthy');
    assert.equal(node.eventsOf(pod).slice(before).filter((e) => e.startsWith('Killing')).length, 0);
    node.remove(pod);
  });

  void it('tcpSocket: an open port is ready; a closed one fails liveness and, with restartPolicy Never, the pod fails', async () => {
    const pod = node.pod('tcp', {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'open', image: busybox, command: ['nc', '-ll', '-p', '8080', '-e', 'true'], ports: [{ containerPort: 8080 }],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
        },
        {
          name: 'closed', image: busybox, command: ['sh', '-c', SERVE],
          livenessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    });
    node.run(pod);
    await node.waitStatus(pod, 'open ready', (x) => containerStatus(x, 'open')?.ready === true);
    const s = await node.waitStatus(pod, 'closed killed', (x) => containerStatus(x, 'closed')?.state?.terminated !== undefined, 30_000);
    assert.equal(containerStatus(s, 'closed')?.restartCount, 0, 'Never: not restarted');
    const events = node.eventsOf(pod);
    assert.ok(events.some((e) => /^Unhealthy: Liveness probe failed: dial tcp 10\.88\.\d+\.\d+:9999: connect ECONNREFUSED/.test(e)), events.join('\n'));
    assert.ok(events.includes('Killing: Container closed failed liveness probe'), events.join('\n'));
    assert.equal(containerStatus(s, 'open')?.state?.running !== undefined, true, 'the other container keeps running');
    node.remove(pod);
  });

  void it('grpc health checks (SERVING, NOT_SERVING) against the pod IP of a host-network pod', async () => {
    let serving: ServingStatus = 'SERVING';
    const server = new Server();
    server.addService(
      {
        Check: {
          path: HEALTH_CHECK_METHOD, requestStream: false, responseStream: false,
          requestSerialize: (r: { service: string }) => healthCodec.encodeRequest(r.service),
          requestDeserialize: (b: Buffer) => ({ service: healthCodec.decodeRequest(b) }),
          responseSerialize: (s: ServingStatus) => healthCodec.encodeResponse(s),
          responseDeserialize: (b: Buffer) => healthCodec.decodeResponse(b),
        },
      },
      { Check: (call: { request: { service: string } }, cb: (e: null, r: ServingStatus) => void) => { cb(null, call.request.service === 'api' ? serving : 'SERVICE_UNKNOWN'); } },
    );
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => {
        if (err === null) resolve(p);
        else reject(err);
      });
    });
    try {
      const pod = node.pod('grpc', {
        hostNetwork: true,
        containers: [{ name: 'app', image: busybox, command: ['sh', '-c', SERVE], readinessProbe: { grpc: { port, service: 'api' }, periodSeconds: 1, failureThreshold: 1 } }],
      });
      node.run(pod);
      await node.waitStatus(pod, 'Ready', (x) => conditionOf(x, 'Ready') === 'True');
      serving = 'NOT_SERVING';
      await node.waitStatus(pod, 'not Ready', (x) => conditionOf(x, 'Ready') === 'False');
      assert.ok(node.eventsOf(pod).includes('Unhealthy: Readiness probe failed: service unhealthy (responded with "NOT_SERVING")'), node.eventsOf(pod).join('\n'));
      node.remove(pod);
    } finally {
      server.forceShutdown();
    }
  });

  void it('httpGet over HTTPS without certificate checks, with headers and the probe user agent', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'na-healthy-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=healthy', '-days', '1', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
    const seen: string[] = [];
    const server = https.createServer({ key: await readFile(path.join(dir, 'k.pem')), cert: await readFile(path.join(dir, 'c.pem')) }, (req, res) => {
      seen.push(`${req.url ?? ''} ${req.headers['user-agent'] ?? ''} ${String(req.headers['x-check'])}`);
      res.writeHead(200).end();
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      const pod = node.pod('https', {
        hostNetwork: true,
        containers: [{
          name: 'app', image: busybox, command: ['sh', '-c', SERVE],
          readinessProbe: { httpGet: { scheme: 'HTTPS', path: '/healthz?full=1', port, httpHeaders: [{ name: 'X-Check', value: 'deep' }] }, periodSeconds: 1 },
        }],
      });
      node.run(pod);
      await node.waitStatus(pod, 'Ready', (x) => conditionOf(x, 'Ready') === 'True');
      assert.equal(seen[0], '/healthz?full=1 orch-probe/1.28 deep');
      node.remove(pod);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('a startup probe holds readiness back until it succeeds; one that keeps failing restarts the container', async () => {
    const pod = node.pod('startup', {
      containers: [
        {
          name: 'slow', image: busybox, command: ['sh', '-c', `sleep 2; touch /tmp/started; ${SERVE}`],
          startupProbe: { exec: { command: ['test', '-f', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 30 },
          readinessProbe: { exec: { command: ['true'] }, periodSeconds: 10 },
        },
        {
          name: 'never', image: busybox, command: ['sh', '-c', SERVE],
          startupProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 },
        },
      ],
    });
    node.run(pod);
    let s = await node.waitStatus(pod, 'slow running', (x) => containerStatus(x, 'slow')?.state?.running !== undefined);
    assert.deepEqual([containerStatus(s, 'slow')?.started, containerStatus(s, 'slow')?.ready], [false, false]);
    s = await node.waitStatus(pod, 'slow started and ready', (x) => containerStatus(x, 'slow')?.ready === true);
    assert.equal(containerStatus(s, 'slow')?.started, true);
    s = await node.waitStatus(pod, 'never restarted', (x) => (containerStatus(x, 'never')?.restartCount ?? 0) >= 1, 30_000);
    assert.ok(node.eventsOf(pod).includes('Killing: Container never failed startup probe, will be restarted'), node.eventsOf(pod).join('\n'));
    assert.equal(conditionOf(s, 'Ready'), 'False');
    node.remove(pod);
  });

  void it('initialDelaySeconds delays the first probe; an exec probe past its timeout fails', async () => {
    const pod = node.pod('delay', {
      containers: [
        { name: 'late', image: busybox, command: ['sh', '-c', SERVE], readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 3, periodSeconds: 1 } },
        { name: 'stuck', image: busybox, command: ['sh', '-c', SERVE], readinessProbe: { exec: { command: ['sleep', '5'] }, timeoutSeconds: 1, periodSeconds: 2 } },
      ],
    });
    node.run(pod);
    const running = await node.waitStatus(pod, 'late running', (x) => containerStatus(x, 'late')?.state?.running?.startedAt !== undefined);
    const startedAt = Date.parse(containerStatus(running, 'late')?.state?.running?.startedAt ?? '');
    await node.waitStatus(pod, 'late ready', (x) => containerStatus(x, 'late')?.ready === true);
    assert.ok(Date.now() - startedAt >= 2500, `ready ${Date.now() - startedAt} ms after the start`);
    await node.waitStatus(pod, 'a timed-out probe', () => node.eventsOf(pod).some((e) => e.startsWith('Unhealthy: Readiness probe failed: command "sleep 5" timed out')));
    assert.equal(containerStatus(node.statusOf(pod) ?? {}, 'stuck')?.ready, false);
    node.remove(pod);
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Server, ServerCredentials, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../api/errors.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createCertificate, type IssuedCertificate } from '../server/index.js';
import { grpcProbe, healthCodec, HEALTH_CHECK_METHOD, type ServingStatus } from './grpc.js';
import { httpGet, httpTarget, resolveContainerPort } from './http.js';
import { runProbe, probeTimings } from './probe.js';
import type { ExecRunner } from './socket.js';

const container: Container = { name: 'app', ports: [{ name: 'web', containerPort: 8080 }] };

function listen(server: http.Server | https.Server | net.Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

function close(server: http.Server | https.Server | net.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}

const noExec: ExecRunner = { execSync: () => Promise.reject(new Error('no exec here')) };
const probe = (p: Probe, podIP = '127.0.0.1', c: Container = container) => runProbe({ timeoutSeconds: 1, ...p }, { container: c, containerId: 'c1', podIP, exec: noExec });

void describe('probe timings and ports', () => {
  void it('applies upstream defaults to unset or zero timings', () => {
    assert.deepEqual(probeTimings({}), { initialDelayMs: 0, periodMs: 10_000, timeoutMs: 1000, successThreshold: 1, failureThreshold: 3 });
    assert.deepEqual(probeTimings({ initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 3, successThreshold: 2, failureThreshold: 1 }), {
      initialDelayMs: 2000, periodMs: 1000, timeoutMs: 3000, successThreshold: 2, failureThreshold: 1,
    });
  });
  void it('resolves ports by number and by container port name', () => {
    assert.equal(resolveContainerPort(80, container), 80);
    assert.equal(resolveContainerPort('web', container), 8080);
    assert.throws(() => resolveContainerPort('nope', container), /couldn't find port: nope/);
    assert.throws(() => resolveContainerPort(70000, container), /invalid port number/);
  });
});

void describe('httpGet probe', () => {
  let port = 0;
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    const url = req.url ?? '';
    if (url === '/ok') res.writeHead(200).end('fine');
    else if (url === '/moved') res.writeHead(302, { location: '/ok' }).end();
    else if (url === '/away') res.writeHead(301, { location: 'http://192.0.2.1/elsewhere' }).end('bye');
    else if (url === '/slow') setTimeout(() => res.writeHead(200).end(), 3000).unref();
    else res.writeHead(500).end('broken');
  });
  before(async () => {
    port = await listen(server);
  });
  after(async () => {
    server.closeAllConnections();
    await close(server);
  });

  void it('2xx succeeds with the body; 4xx/5xx fail with the status code', async () => {
    assert.deepEqual(await probe({ httpGet: { path: '/ok', port } }), { result: 'success', output: 'fine' });
    assert.deepEqual(await probe({ httpGet: { path: '/bad', port } }), { result: 'failure', output: 'HTTP probe failed with statuscode: 500' });
  });
  void it('sends the user agent, Accept and custom headers (Host too), to the pod IP', async () => {
    seen.length = 0;
    await probe({ httpGet: { path: '/ok', port, httpHeaders: [{ name: 'X-Probe', value: 'yes' }, { name: 'Host', value: 'example.test' }] } });
    assert.deepEqual([seen[0]?.['user-agent'], seen[0]?.accept, seen[0]?.['x-probe'], seen[0]?.host], ['orch-probe/1.28', '*/*', 'yes', 'example.test']);
  });
  void it('follows redirects on the same host; another host ends with a warning', async () => {
    assert.equal((await probe({ httpGet: { path: '/moved', port } })).result, 'success');
    assert.deepEqual(await probe({ httpGet: { path: '/away', port } }), { result: 'warning', output: 'Probe terminated redirects, Response body: bye' });
  });
  void it('fails on a timeout and on a refused connection; unknown without a pod IP', async () => {
    // The probe's own timeout (timeoutSeconds, at least 1 s) is the same code path with a shorter wait.
    const slow = await httpGet(httpTarget({ path: '/slow', port }, container, '127.0.0.1', 'test'), 100);
    assert.equal(slow.result, 'failure');
    assert.match(slow.output, /^Get "http:\/\/127\.0\.0\.1:\d+\/slow": context deadline exceeded/);
    const refused = await probe({ httpGet: { path: '/', port: 1 } });
    assert.equal(refused.result, 'failure');
    assert.match(refused.output, /ECONNREFUSED/);
    assert.deepEqual(await probe({ httpGet: { path: '/', port } }, ''), { result: 'unknown', output: 'the pod has no IP yet' });
  });
});

void describe('httpGet probe over HTTPS', () => {
  let serving: IssuedCertificate = { certPem: '', keyPem: '' };
  let server: https.Server | undefined;
  before(async () => {
    serving = await createCertificate({ subject: { commonName: 'probe-test' }, serverAuth: true, keyType: 'ecdsa' });
  });
  after(async () => {
    if (server !== undefined) await close(server);
  });
  void it('does not verify the certificate', async () => {
    server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (_req, res) => res.writeHead(204).end());
    const port = await listen(server);
    assert.equal((await probe({ httpGet: { path: '/', port, scheme: 'HTTPS' } })).result, 'success');
  });
});

void describe('tcpSocket probe', () => {
  void it('succeeds when a connection opens, fails when refused', async () => {
    const server = net.createServer((s) => s.end());
    const port = await listen(server);
    assert.deepEqual(await probe({ tcpSocket: { port } }), { result: 'success', output: '' });
    await close(server);
    const refused = await probe({ tcpSocket: { port } });
    assert.equal(refused.result, 'failure');
    assert.match(refused.output, new RegExp(`^dial tcp 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
  });
});

void describe('exec probe', () => {
  /** A runtime with one running container; its ExecSync answers `check it` with `result`. */
  const runtime = async (result?: { exitCode: number; stdout?: string }): Promise<{ fake: FakeRuntime; id: string }> => {
    const fake = new FakeRuntime();
    fake.images.set('img', 'sha256:img');
    const sandboxConfig = { metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 } };
    const podSandboxId = await fake.runPodSandbox({ config: sandboxConfig });
    const id = await fake.createContainer({ podSandboxId, sandboxConfig, config: { metadata: { name: 'app', attempt: 0 }, image: { image: 'img' } } });
    await fake.startContainer(id);
    if (result !== undefined) fake.execResults.set('check it', result);
    return { fake, id };
  };
  const exec = ({ fake, id }: { fake: FakeRuntime; id: string }, timeoutSeconds = 1) =>
    runProbe({ exec: { command: ['check', 'it'] }, timeoutSeconds }, { container, containerId: id, podIP: '', exec: fake });
  void it('exit 0 succeeds, another code fails with the output', async () => {
    assert.deepEqual(await exec(await runtime({ exitCode: 0, stdout: 'ok' })), { result: 'success', output: 'ok' });
    assert.deepEqual(await exec(await runtime({ exitCode: 2, stdout: 'nope' })), { result: 'failure', output: 'nope' });
  });
  void it('a timeout fails; any other runtime error is unknown', async () => {
    const timedOut = await runtime();
    timedOut.fake.failNext('execSync', new OrchError('CRI_TIMEOUT', 'timeout', 'deadline exceeded'));
    assert.deepEqual(await exec(timedOut), { result: 'failure', output: 'command "check it" timed out' });
    const exited = await runtime();
    exited.fake.exit(exited.id, 1);
    assert.deepEqual(await exec(exited), { result: 'unknown', output: `container ${exited.id} is in CONTAINER_EXITED state` });
  });
  void it('passes the probe timeout in seconds to ExecSync', async () => {
    const r = await runtime();
    await exec(r, 7);
    assert.deepEqual(r.fake.callsOf('execSync'), [{ containerId: r.id, cmd: ['check', 'it'], timeout: 7 }]);
  });
});

void describe('grpc probe', () => {
  const statuses = new Map<string, ServingStatus>([['', 'SERVING'], ['db', 'NOT_SERVING']]);
  let port = 0;
  const server = new Server();
  before(async () => {
    server.addService(
      {
        Check: {
          path: HEALTH_CHECK_METHOD, requestStream: false, responseStream: false,
          // An object: grpc-js's server takes a falsy request ('') for a missing one.
          requestSerialize: (r: { service: string }) => healthCodec.encodeRequest(r.service), requestDeserialize: (b: Buffer) => ({ service: healthCodec.decodeRequest(b) }),
          responseSerialize: (s: ServingStatus) => healthCodec.encodeResponse(s), responseDeserialize: (b: Buffer) => healthCodec.decodeResponse(b),
        },
      },
      {
        Check: (call: { request: { service: string } }, callback: (err: Partial<ServiceError> | null, res?: ServingStatus) => void) => {
          const s = statuses.get(call.request.service);
          if (s === undefined) callback({ code: GrpcStatus.NOT_FOUND, details: 'unknown service' });
          else callback(null, s);
        },
      },
    );
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => {
        if (err === null) resolve(p);
        else reject(err);
      });
    });
  });
  after(() => {
    server.forceShutdown();
  });

  void it('encodes and decodes the health messages', () => {
    assert.equal(healthCodec.decodeRequest(healthCodec.encodeRequest('svc')), 'svc');
    assert.equal(healthCodec.encodeRequest('').length, 0);
    for (const s of ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const) assert.equal(healthCodec.decodeResponse(healthCodec.encodeResponse(s)), s);
  });
  void it('SERVING succeeds; another status fails; errors fail with upstream messages', async () => {
    assert.deepEqual(await probe({ grpc: { port } }), { result: 'success', output: 'service is serving' });
    assert.deepEqual(await probe({ grpc: { port, service: 'db' } }), { result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    const missing = await probe({ grpc: { port, service: 'other' } });
    assert.match(missing.output, /^error: health rpc probe failed: 5 NOT_FOUND: unknown service/);
  });
  void it('fails within the timeout when nothing listens', async () => {
    const started = Date.now();
    const r = await grpcProbe('127.0.0.1', 1, '', 100);
    assert.equal(r.result, 'failure');
    assert.match(r.output, /^timeout: failed to connect service "127\.0\.0\.1:1" within 0\.1s/);
    assert.ok(Date.now() - started < 3000);
  });
});

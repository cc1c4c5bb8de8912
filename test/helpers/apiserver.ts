/**
 * A real orch-apiserver process for integration tests and benchmarks: the built binary on a free
 * loopback port with temporary cert, data and config directories, SQLite or etcd storage (its
 * own etcd unless endpoints are given), an admin token and an admin orchconfig. stop() kills the
 * process (and the etcd it started) and removes the directories. Also an HTTPS client that
 * trusts the server's CA, and a reader of watch streams; pod and node bodies and a kubectl
 * runner for the core resources' tests.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, webcrypto } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x509Library } from '../../src/apiserver/server/index.js';
import { freePort, startEtcd, type EtcdCluster } from './etcd.js';
import { WaitAbandoned, waitFor } from './wait.js';

export interface TokenSpec {
  readonly token: string;
  readonly user: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

export interface StartApiServerOptions {
  readonly storage: 'sqlite' | 'etcd';
  /** Use this etcd instead of starting one. */
  readonly etcdEndpoints?: readonly string[];
  /** Tokens besides the admin token (user admin, group system:masters). */
  readonly tokens?: readonly TokenSpec[];
  /** More flags, e.g. ['--event-ttl=2s']. */
  readonly args?: readonly string[];
  /** A policy file's text: turns on --authorization-mode=Policy. */
  readonly policy?: string;
  /**
   * Run every control loop (scheduler, node lifecycle, taint eviction, pod GC). By default only
   * those of service accounts run (the `default` service account and the `kube-root-ca.crt`
   * ConfigMap of each namespace, which every pod's ServiceAccount admission and API access
   * volume need): tests of the API surface make nodes and pods by hand, which the other loops
   * would bind, taint and delete.
   */
  readonly controllers?: boolean;
  /** Flags for node itself, before the launcher (e.g. ['--cpu-prof']). */
  readonly nodeArgs?: readonly string[];
}

export interface ApiServer {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly caFile: string;
  readonly adminKubeconfig: string;
  /** The admin bearer token (group system:masters). */
  readonly token: string;
  readonly dir: string;
  readonly etcdEndpoints: readonly string[];
  readonly client: ApiClient;
  /** The pid of the server process (the latest one after resume()). */
  readonly pid: number | undefined;
  /** The process's stderr so far. */
  logs(): string;
  /** SIGTERM (then SIGKILL), waits for the exit, stops its etcd, removes the files. Idempotent. */
  stop(): Promise<void>;
  /** Stops the process only (its data, port and files stay): the API server is down. */
  pause(): Promise<void>;
  /** Starts the process again on the same port and data; resolves once it is ready. */
  resume(): Promise<void>;
}

const BINARY = fileURLToPath(new URL('../../../bin/orch-apiserver', import.meta.url));

export interface Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly body: Record<string, unknown>;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Default application/json (the body is sent as is when it is a string or Buffer). */
  readonly contentType?: string;
  /** Default: the admin token; null sends no Authorization header. */
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
}

export interface WatchEventLine {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export interface WatchStream {
  readonly status: number;
  /** Resolves with the next event (waits up to timeoutMs, default 10 s). */
  next(timeoutMs?: number): Promise<WatchEventLine>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export class ApiClient {
  readonly agent: Agent;
  constructor(readonly url: string, readonly ca: string, readonly token: string) {
    this.agent = new Agent({ ca, keepAlive: true, maxSockets: 256 });
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const payload = options.body === undefined ? undefined
      : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
    const headers: Record<string, string> = { Accept: 'application/json', ...(options.headers ?? {}) };
    const token = options.token === undefined ? this.token : options.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (payload !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      // Node sends DELETE bodies without chunked encoding: the length must be given.
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${this.url}${path}`, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // Not JSON (health endpoints, YAML): callers read `text`.
            body = {};
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Opens a watch (GET with the path's query) and reads its events line by line. */
  watch(path: string, token?: string): Promise<WatchStream> {
    return new Promise((resolve, reject) => {
      const headers = { Authorization: `Bearer ${token ?? this.token}`, Accept: 'application/json' };
      const req = httpsRequest(`${this.url}${path}`, { method: 'GET', headers, agent: false, ca: this.ca }, (res) => {
        const queue: WatchEventLine[] = [];
        const waiters: ((e: WatchEventLine) => void)[] = [];
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line === '') continue;
            const event = JSON.parse(line) as WatchEventLine;
            const waiter = waiters.shift();
            if (waiter !== undefined) waiter(event);
            else queue.push(event);
          }
        });
        const ended = new Promise<void>((done) => {
          res.on('end', done);
          res.on('close', done);
        });
        resolve({
          status: res.statusCode ?? 0,
          ended,
          next: (timeoutMs = 10_000) => {
            const queued = queue.shift();
            if (queued !== undefined) return Promise.resolve(queued);
            return new Promise<WatchEventLine>((ok, fail) => {
              const timer = setTimeout(() => {
                waiters.splice(waiters.indexOf(waiter), 1);
                fail(new Error(`no watch event on ${path} within ${timeoutMs} ms`));
              }, timeoutMs);
              const waiter = (e: WatchEventLine): void => {
                clearTimeout(timer);
                ok(e);
              };
              waiters.push(waiter);
            });
          },
          close: () => {
            req.destroy();
          },
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function tokenLine(t: TokenSpec): string {
  return `${t.token},${t.user},${t.uid ?? t.user},"${(t.groups ?? []).join(',')}"`;
}

export async function startApiServer(options: StartApiServerOptions): Promise<ApiServer> {
  if (!existsSync(BINARY)) throw new Error(`the orch-apiserver launcher is missing at ${BINARY}`);
  const dir = mkdtempSync(join(tmpdir(), 'orch-apiserver-'));
  const token = randomBytes(16).toString('hex');
  writeFileSync(join(dir, 'tokens.csv'), [tokenLine({ token, user: 'admin', groups: ['system:masters'] }), ...(options.tokens ?? []).map(tokenLine)].join('\n') + '\n');
  let etcd: EtcdCluster | undefined;
  let etcdEndpoints = options.etcdEndpoints ?? [];
  if (options.storage === 'etcd' && etcdEndpoints.length === 0) {
    etcd = await startEtcd();
    etcdEndpoints = etcd.endpoints;
  }
  const port = await freePort();
  const kubeconfig = join(dir, 'admin.orchconfig');
  const args = [
    BINARY, '--bind-address=127.0.0.1', `--secure-port=${port}`, `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`, `--write-admin-orchconfig=${kubeconfig}`,
    ...(options.storage === 'etcd' ? ['--storage-backend=etcd3', `--etcd-servers=${etcdEndpoints.join(',')}`, `--etcd-prefix=/orch-${randomBytes(4).toString('hex')}`] : []),
    ...(options.policy === undefined ? [] : ['--authorization-mode=Policy', `--authorization-policy-file=${join(dir, 'policy.yaml')}`]),
    // Without the election: its Lease written every 2 s would compact, with a short compaction
    // interval, the revision a test's watch starts from.
    ...(options.controllers === true ? [] : ['--controllers=serviceaccount-controller,root-ca-certificate-publisher-controller', '--leader-elect=false']),
    ...(options.args ?? []),
  ];
  if (options.policy !== undefined) writeFileSync(join(dir, 'policy.yaml'), options.policy);
  let stderr = '';
  let child!: ChildProcess;
  let exited: Promise<void> = Promise.resolve();
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const launch = (): void => {
    child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const c = child;
    exited = new Promise<void>((resolve) => c.once('exit', () => {
      resolve();
    }));
  };
  const halt = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
  };
  launch();
  process.once('exit', killOnExit);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    client.close();
    await halt();
    process.removeListener('exit', killOnExit);
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `https://127.0.0.1:${port}`;
  const caFile = join(dir, 'pki', 'ca.crt');
  let client = new ApiClient(url, '', token);
  const ready = (): Promise<unknown> => waitFor(`orch-apiserver on ${url} to be ready`, async () => {
    if (child.exitCode !== null) throw new WaitAbandoned(`orch-apiserver exited with ${child.exitCode}: ${stderr}`);
    if (!existsSync(kubeconfig) || !existsSync(caFile)) return false;
    if (client.ca === '') client = new ApiClient(url, readFileSync(caFile, 'utf8'), token);
    const res = await client.request('GET', '/readyz', { token: null });
    return res.status === 200;
  }, { timeoutMs: 30_000, intervalMs: 50 });
  // Tests start on a namespace as the service account loops leave it (its `default` service
  // account and kube-root-ca.crt made), not racing those loops' first writes.
  const settled = (): Promise<unknown> => waitFor('the default namespace\'s service account and kube-root-ca.crt', async () => {
    if (child.exitCode !== null) throw new WaitAbandoned(`orch-apiserver exited with ${child.exitCode}: ${stderr}`);
    const [sa, ca] = await Promise.all([
      client.request('GET', '/api/v1/namespaces/default/serviceaccounts/default'),
      client.request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt'),
    ]);
    return sa.status === 200 && ca.status === 200;
  }, { timeoutMs: 30_000, intervalMs: 50 });
  try {
    await ready();
    if (options.controllers !== true) await settled();
  } catch (err) {
    await stop();
    throw err;
  }
  const pause = async (): Promise<void> => {
    await halt();
  };
  const resume = async (): Promise<void> => {
    launch();
    await ready();
  };
  return { url, port, caFile, adminKubeconfig: kubeconfig, token, dir, etcdEndpoints, get client() { return client; }, get pid() { return child.pid; }, logs: () => stderr, stop, pause, resume };
}

/** A valid events.orch.io/v1 Event body (name, namespace default), with `extra` fields merged over it. */
export function v1Event(name: string, extra: Record<string, unknown> = {}, namespace = 'default'): Record<string, unknown> {
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, namespace },
    eventTime: '2024-05-01T10:00:00.123456Z',
    reportingController: 'orch.io/test',
    reportingInstance: 'test-1',
    action: 'Testing',
    reason: 'Tested',
    note: `note of ${name}`,
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'web-1', namespace, uid: 'u-1' },
    ...extra,
  };
}

/** The path of events in a namespace: events.orch.io/v1 (default) or the core v1 view. */
export function eventsPath(namespace = 'default', view: 'v1' | 'core' = 'v1'): string {
  return view === 'v1' ? `/apis/events.orch.io/v1/namespaces/${namespace}/events` : `/api/v1/namespaces/${namespace}/events`;
}

/** A core v1 Pod body bound to `node` ('' for none), one container `c`, with `extra` merged over it. */
export function v1Pod(name: string, node: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...(node === '' ? {} : { nodeName: node }), containers: [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'] }] },
    ...extra,
  };
}

/** A core v1 Node body reachable at 127.0.0.1:`port` (its node agent), Ready. */
export function v1Node(name: string, port: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'node-role.orch.io/worker': '' } },
    status: {
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: name }],
      daemonEndpoints: { nodeagentEndpoint: { Port: port } },
      conditions: [{ type: 'Ready', status: 'True', reason: 'NodeagentReady', message: 'nodeagent is posting ready status' }],
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      nodeInfo: {
        machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.6.20',
        nodeagentVersion: 'v1.30.0-orch', orchProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
    },
    ...extra,
  };
}

/** /usr/bin/kubectl: the dispatcher runs the kubectl matching the server's minor version (1.30). */
export const KUBECTL = '/usr/bin/kubectl';

/**
 * Runs kubectl with the server's admin orchconfig (HOME in the server's directory, so its
 * discovery cache is the test's own). Rejects with kubectl's stderr when it exits non-zero.
 */
export function runKubectl(server: ApiServer, args: readonly string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  if (!existsSync(KUBECTL)) return Promise.reject(new Error(`${KUBECTL} is missing: install kubectl (the tests need a real kubectl binary)`));
  const home = join(server.dir, 'home');
  return new Promise((resolve, reject) => {
    execFile(KUBECTL, [...args], { env: { ...process.env, HOME: home, KUBECONFIG: server.adminKubeconfig, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`kubectl ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/** `kubectl create -f` of these objects as one List (a file in the server's directory). */
export async function kubectlCreate(server: ApiServer, objects: readonly Record<string, unknown>[]): Promise<void> {
  const file = join(server.dir, `objects-${randomBytes(6).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  await runKubectl(server, ['create', '-f', file]);
}

/** The object at `path` (a GET), or undefined when the server does not answer 200. */
export async function getObject<T>(server: ApiServer, path: string): Promise<T | undefined> {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body as T) : undefined;
}

export interface CsrSpec {
  readonly commonName: string;
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

/** A new ECDSA P-256 key and a PEM PKCS#10 request for it (what a node agent sends in a CSR). */
export async function makeCsr(csr: CsrSpec): Promise<{ requestPem: string; keyPem: string }> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const names = [...(csr.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(csr.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [...(csr.organizations ?? []).map((o) => ({ O: [o] })), { CN: [csr.commonName] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: names.length === 0 ? [] : [new x509.SubjectAlternativeNameExtension(names)],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { requestPem: request.toString('pem'), keyPem: `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n` };
}

/** A certificates.orch.io/v1 CertificateSigningRequest body for `requestPem`. */
export function v1Csr(name: string, requestPem: string, signerName: string, usages: readonly string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(requestPem, 'utf8').toString('base64'), signerName, usages: [...usages], ...extra },
  };
}

/**
 * A stand-in for the cluster API server in the agent's server tests: a small HTTPS server
 * (its own CA and serving certificate) that answers TokenReview (authentication.orch.io/v1)
 * and SubjectAccessReview (authorization.orch.io/v1) from tables the test controls, records
 * every review it receives, and writes the connection file (kubeconfig format) the agent reads
 * with --orchconfig. Also here: a test PKI (a client CA and client certificates made with
 * @peculiar/x509) and HTTPS clients (Node's https, curl) for the agent's secure port.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createCertificate, type IssuedCertificate } from '../../src/agent/server/index.js';

const execFileAsync = promisify(execFile);

// ---- PKI ----

export interface TestPki {
  /** Where the PEM files are written (a temporary directory the test removes when done). */
  readonly dir: string;
  readonly ca: IssuedCertificate;
  /** The CA's PEM file (authentication.x509.clientCAFile). */
  readonly caFile: string;
  /** A client certificate for `user` with `groups` as Organizations; files written for curl. */
  client(user: string, groups?: readonly string[], options?: { readonly expired?: boolean; readonly otherCA?: boolean }): Promise<TestClientCert>;
}

export interface TestClientCert extends IssuedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

export async function createTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'nodeagent-pki-'));
  const ca = await createCertificate({ subject: { commonName: 'nodeagent-test-client-ca' }, isCA: true, keyType: 'ecdsa' });
  const caFile = join(dir, 'client-ca.crt');
  await writeFile(caFile, ca.certPem);
  let other: IssuedCertificate | undefined;
  let n = 0;
  return {
    dir, ca, caFile,
    async client(user, groups = [], options = {}) {
      other ??= options.otherCA === true ? await createCertificate({ subject: { commonName: 'some-other-ca' }, isCA: true, keyType: 'ecdsa' }) : undefined;
      const issuer = options.otherCA === true && other !== undefined ? other : ca;
      const now = Date.now();
      const cert = await createCertificate({
        subject: { commonName: user, organizations: groups }, issuer, clientAuth: true, keyType: 'ecdsa',
        ...(options.expired === true ? { notBefore: new Date(now - 48 * 3600_000), notAfter: new Date(now - 24 * 3600_000) } : {}),
      });
      n++;
      const certFile = join(dir, `client-${n}.crt`);
      const keyFile = join(dir, `client-${n}.key`);
      await writeFile(certFile, cert.certPem);
      await writeFile(keyFile, cert.keyPem, { mode: 0o600 });
      return { ...cert, certFile, keyFile };
    },
  };
}

// ---- the review server ----

export interface ReviewedUserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

export interface AccessReviewSpec {
  readonly user?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly resourceAttributes?: Readonly<Record<string, string>>;
}

export interface ReviewServer {
  readonly url: string;
  /** The connection file for --orchconfig. */
  readonly orchconfig: string;
  /** Tokens the server accepts. */
  readonly tokens: Map<string, ReviewedUserInfo>;
  /** Decides SubjectAccessReviews (default: allow everything). */
  decide: (spec: AccessReviewSpec) => { allowed: boolean; reason?: string };
  /** Every token reviewed, in order. */
  readonly tokenReviews: string[];
  /** Every access review's spec, in order. */
  readonly accessReviews: AccessReviewSpec[];
  /** Requests refused because the agent's own credentials were missing. */
  refused: number;
  /** Stops the server and removes its directory (the connection file with it). */
  close(): Promise<void>;
}

/** The bearer token the agent presents to the review server (from the connection file). */
const AGENT_TOKEN = 'nodeagent-client-token';

export async function startReviewServer(options: { readonly tokenFile?: boolean } = {}): Promise<ReviewServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nodeagent-review-'));
  const ca = await createCertificate({ subject: { commonName: 'review-server-ca' }, isCA: true, keyType: 'ecdsa' });
  const serving = await createCertificate({ subject: { commonName: 'review-server' }, issuer: ca, serverAuth: true, keyType: 'ecdsa', altNames: ['localhost', '127.0.0.1'] });
  const state = {
    tokens: new Map<string, ReviewedUserInfo>(),
    decide: (_spec: AccessReviewSpec): { allowed: boolean; reason?: string } => ({ allowed: true }),
    tokenReviews: [] as string[],
    accessReviews: [] as AccessReviewSpec[],
    refused: 0,
  };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const answer = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${AGENT_TOKEN}`) {
        state.refused++;
        answer(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', code: 401 });
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { apiVersion?: string; kind?: string; spec?: Record<string, unknown> };
      if (req.method === 'POST' && req.url === '/apis/authentication.orch.io/v1/tokenreviews' && body.kind === 'TokenReview') {
        const token = typeof body.spec?.token === 'string' ? body.spec.token : '';
        state.tokenReviews.push(token);
        const user = state.tokens.get(token);
        answer(201, { ...body, status: user === undefined ? { authenticated: false, error: 'token not known' } : { authenticated: true, user } });
        return;
      }
      if (req.method === 'POST' && req.url === '/apis/authorization.orch.io/v1/subjectaccessreviews' && body.kind === 'SubjectAccessReview') {
        const spec = (body.spec ?? {}) as AccessReviewSpec;
        state.accessReviews.push(spec);
        answer(201, { ...body, status: state.decide(spec) });
        return;
      }
      answer(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `no route for ${req.method ?? ''} ${req.url ?? ''}`, code: 404 });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, `${AGENT_TOKEN}\n`);
  const orchconfig = join(dir, 'orchconfig.yaml');
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  await writeFile(orchconfig, [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${url}`,
    '    certificate-authority: ca.crt',
    'users:',
    '- name: agent',
    '  user:',
    options.tokenFile === true ? '    tokenFile: token' : `    token: ${AGENT_TOKEN}`,
    'contexts:',
    '- name: test',
    '  context: {cluster: test, user: agent}',
    'current-context: test',
    '',
  ].join('\n'));
  return Object.assign(state, {
    url,
    orchconfig,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => { server.close(() => { resolve(); }); });
      await rm(dir, { recursive: true, force: true });
    },
  });
}

// ---- clients of the agent's secure port ----

export interface HttpsAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface HttpsCall {
  readonly port: number;
  readonly path: string;
  readonly method?: string;
  readonly host?: string;
  /** The agent's serving CA (PEM); absent: the certificate is not checked. */
  readonly ca?: string | Buffer;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One request with Node's https client (a new connection each time). */
export function httpsCall(c: HttpsCall): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: c.host ?? '127.0.0.1', port: c.port, path: c.path, method: c.method ?? 'GET', agent: false,
      ...(c.ca === undefined ? { rejectUnauthorized: false } : { ca: c.ca, servername: 'localhost' }),
      ...(c.cert === undefined ? {} : { cert: c.cert }), ...(c.key === undefined ? {} : { key: c.key }),
      headers: { ...(c.token === undefined ? {} : { authorization: `Bearer ${c.token}` }), ...c.headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }); });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(c.body);
  });
}

/** curl against the secure port: returns the status code and the body. */
export async function curl(args: readonly string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await execFileAsync('curl', ['-sS', '--max-time', '20', '-w', '\n%{http_code}', ...args], { maxBuffer: 64 << 20 });
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

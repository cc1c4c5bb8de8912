/**
 * TLS bootstrap of the agent's client certificate (upstream's kubelet certificate/bootstrap):
 * when the --orchconfig file is missing or its client certificate cannot be used, the
 * --bootstrap-orchconfig connection (a bootstrap token) asks for a certificate for
 * CN=system:node:<node>, O=system:nodes from signer orch.io/kube-apiserver-client-nodeagent.
 *
 * The key: the current pair's key in --cert-dir when its certificate is still valid, otherwise
 * `nodeagent-client.key.tmp` (made once, kept until the certificate is stored), so that a
 * restart while waiting resumes the same request: the request's name is derived from the key,
 * subject and usages (`node-csr-<sha512/256 hex>`, upstream's digested name, in lower-case hex
 * so that it is a DNS subdomain). The pair is stored as `nodeagent-client-<ts>.pem` with the
 * `nodeagent-client-current.pem` link, then the --orchconfig file is written atomically: the
 * bootstrap file's server and CA, and a user whose client-certificate and client-key both name
 * the link.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { loadOrchconfig, type OrchConnection } from '../orchclient/index.js';
import type { RestClient } from '../orchclient/index.js';
import { CERT_ORCHCONFIG_WRITE, CERT_STORE_INVALID } from './codes.js';
import { certificateFacts, generateKeyPem, isPrivateKey, splitPem, usagesFor, type CertificateTemplate } from './pki.js';
import { obtainCertificate } from './request.js';
import { createFileStore, writeFileAtomic } from './store.js';

export const SIGNER_NODEAGENT_CLIENT = 'orch.io/kube-apiserver-client-nodeagent';
export const CLIENT_PREFIX = 'nodeagent-client';
export const TMP_KEY_FILE = 'nodeagent-client.key.tmp';

/** The subject of the agent's certificates for `nodeName`. */
export function nodeTemplate(nodeName: string, dnsNames: readonly string[] = [], ipAddresses: readonly string[] = []): CertificateTemplate {
  return { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'], dnsNames, ipAddresses };
}

export interface BootstrapOptions {
  readonly orchconfigPath: string;
  readonly bootstrapOrchconfigPath: string;
  readonly certDir: string;
  readonly nodeName: string;
  readonly logger: Logger;
  /** The REST client for a connection (composition root: createRestClient). Closed after use. */
  readonly createClient: (connection: OrchConnection) => RestClient;
  /** Default one hour (upstream's bootstrap wait). */
  readonly waitTimeoutMs?: number;
  readonly pollIntervalMs?: number;
  /** spec.expirationSeconds of the request (default: none, the signer's one year). */
  readonly expirationSeconds?: number;
  readonly signal?: AbortSignal;
  /** Validity checks, the wait for the certificate (its timers keep the process alive) and the stored file's name. */
  readonly clock: Clock;
}

/**
 * True when the file at `path` exists, resolves, and holds a client certificate that has not
 * expired (upstream's isClientConfigStillValid). A file that cannot be used is logged and
 * answered false (bootstrap replaces it).
 */
export async function isOrchconfigStillValid(path: string, logger: Logger, now: Date = new Date()): Promise<boolean> {
  try {
    await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new OrchError(CERT_ORCHCONFIG_WRITE, 'invalid', `cannot read the orchconfig file ${path}: ${messageOf(err)}`, { subject: path, cause: err });
  }
  try {
    const connection = await loadOrchconfig(path);
    if (connection.clientCert === undefined) {
      logger.info('the orchconfig file has no client certificate; bootstrapping one', { path });
      return false;
    }
    const facts = certificateFacts(splitPem(connection.clientCert.toString('utf8')).certPem);
    if (facts.notAfter.getTime() <= now.getTime()) {
      logger.info('the client certificate of the orchconfig file has expired; bootstrapping a new one', { path, notAfter: facts.notAfter.toISOString() });
      return false;
    }
    return true;
  } catch (err) {
    logger.warn('the orchconfig file cannot be used; bootstrapping a client certificate', { path, err: messageOf(err) });
    return false;
  }
}

/** The orchconfig document for `connection`'s cluster and the pair at `pemPath`. */
export function orchconfigFor(connection: OrchConnection, pemPath: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{
      name: 'default-cluster',
      cluster: {
        server: connection.server,
        ...(connection.ca === undefined ? {} : { 'certificate-authority-data': connection.ca.toString('base64') }),
        ...(connection.insecureSkipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
        ...(connection.tlsServerName === undefined ? {} : { 'tls-server-name': connection.tlsServerName }),
      },
    }],
    users: [{ name: 'default-auth', user: { 'client-certificate': pemPath, 'client-key': pemPath } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } }],
    'current-context': 'default-context',
  };
}

/** Writes the orchconfig for `connection` and the pair at `pemPath` to `path`, atomically (mode 0600). */
export async function writeOrchconfig(path: string, connection: OrchConnection, pemPath: string): Promise<void> {
  try {
    await mkdir(dirname(resolve(path)), { recursive: true });
    await writeFileAtomic(resolve(path), stringify(orchconfigFor(connection, pemPath)));
  } catch (err) {
    throw new OrchError(CERT_ORCHCONFIG_WRITE, 'unavailable', `cannot write the orchconfig file ${path}: ${messageOf(err)}`, { subject: path, cause: err });
  }
}

/** Upstream's digested request name: the same key, subject and usages give the same name. */
export function digestedCsrName(keyPem: string, template: CertificateTemplate, usages: readonly string[]): string {
  const hash = createHash('sha512-256');
  for (const part of [keyPem, template.commonName, ...template.organizations, ...usages]) {
    // base64url never contains '|': no two inputs give the same stream.
    hash.update(Buffer.from(part, 'utf8').toString('base64url'));
    hash.update('|');
  }
  return `node-csr-${hash.digest('hex')}`;
}

/** The key to request with: the current pair's while its certificate is valid, else the kept temporary key (made once). */
async function requestKey(certDir: string, current: { certPem: string; keyPem: string } | undefined, now: Date, logger: Logger): Promise<string> {
  if (current !== undefined && isPrivateKey(current.keyPem)) {
    try {
      if (certificateFacts(current.certPem).notAfter > now) return current.keyPem;
    } catch (err) {
      logger.warn('the current client certificate does not parse; not reusing its key', { err: messageOf(err) });
    }
  }
  const path = join(certDir, TMP_KEY_FILE);
  try {
    const kept = await readFile(path, 'utf8');
    if (isPrivateKey(kept)) return kept;
    logger.warn('the kept private key does not parse; making a new one', { path });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new OrchError(CERT_STORE_INVALID, 'invalid', `cannot read ${path}: ${messageOf(err)}`, { subject: path, cause: err });
  }
  const keyPem = generateKeyPem();
  try {
    await mkdir(certDir, { recursive: true, mode: 0o755 });
    await writeFileAtomic(path, keyPem);
  } catch (err) {
    throw new OrchError(CERT_STORE_INVALID, 'invalid', `cannot write ${path}: ${messageOf(err)}`, { subject: path, cause: err });
  }
  return keyPem;
}

/**
 * Makes sure the --orchconfig file holds a usable client certificate; blocks until one is
 * issued (or `waitTimeoutMs`). Idempotent: a valid file is left alone (no request). Throws
 * CERT_CSR_DENIED / CERT_CSR_FAILED / CERT_CSR_TIMEOUT / CERT_CSR_CONFLICT naming the request,
 * CERT_STORE_INVALID, CERT_ORCHCONFIG_WRITE, and ORCHCLIENT_* errors of the bootstrap file
 * and the API server.
 */
export async function bootstrapClientCertificate(o: BootstrapOptions): Promise<void> {
  const now = (): Date => new Date(o.clock.now());
  if (await isOrchconfigStillValid(o.orchconfigPath, o.logger, now())) {
    o.logger.v(2, 'the orchconfig file exists and is valid; skipping bootstrap', { path: o.orchconfigPath });
    return;
  }
  o.logger.info('using the bootstrap orchconfig to request a client certificate', { bootstrap: o.bootstrapOrchconfigPath, certDir: o.certDir });
  const connection = await loadOrchconfig(o.bootstrapOrchconfigPath);
  const store = createFileStore({ dir: o.certDir, prefix: CLIENT_PREFIX, clock: o.clock });
  let current;
  try {
    current = await store.current();
  } catch (err) {
    o.logger.warn('the current client certificate cannot be read; requesting a new one', { err: messageOf(err) });
  }
  const keyPem = await requestKey(resolve(o.certDir), current, now(), o.logger);
  const template = nodeTemplate(o.nodeName);
  const client = o.createClient(connection);
  let pair;
  try {
    pair = await obtainCertificate(client, {
      keyPem, template, signerName: SIGNER_NODEAGENT_CLIENT, purpose: 'client auth', logger: o.logger,
      name: digestedCsrName(keyPem, template, usagesFor(keyPem, 'client auth')),
      waitTimeoutMs: o.waitTimeoutMs ?? 3600_000,
      clock: o.clock,
      ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }),
      ...(o.expirationSeconds === undefined ? {} : { expirationSeconds: o.expirationSeconds }),
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
  } finally {
    client.close();
  }
  await store.update(pair);
  const tmpKey = join(resolve(o.certDir), TMP_KEY_FILE);
  await rm(tmpKey, { force: true }).catch((err: unknown) => {
    o.logger.warn('cannot remove the kept private key', { path: tmpKey, err: messageOf(err) });
  });
  await writeOrchconfig(o.orchconfigPath, connection, store.currentPath);
  o.logger.info('wrote the orchconfig file with the new client certificate', { path: o.orchconfigPath, certificate: store.currentPath });
}

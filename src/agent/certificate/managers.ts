/**
 * The agent's two certificate managers, as upstream's kubelet builds them:
 *
 * - client (rotateCertificates): CN=system:node:<node>, O=system:nodes, signer
 *   orch.io/kube-apiserver-client-nodeagent, usages digital signature + client auth, stored as
 *   nodeagent-client-*.pem. A renewal authenticates with the current certificate (the
 *   --orchconfig cluster, its user replaced by the pair); without a usable one it falls back
 *   to the --bootstrap-orchconfig connection.
 * - serving (serverTLSBootstrap): the same subject, signer orch.io/nodeagent-serving, usages
 *   digital signature + server auth, DNS names from the node's Hostname/InternalDNS/ExternalDNS
 *   addresses and IP addresses from InternalIP/ExternalIP, stored as nodeagent-server-*.pem.
 *   Nothing is requested until the node has at least one IP address (upstream's rule); a
 *   change of addresses renews at once. Authenticates with the --orchconfig file (read again
 *   per attempt, so a rotated client certificate is used).
 */
import { isIP } from 'node:net';
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { loadOrchconfig, type OrchConnection } from '../orchclient/index.js';
import type { RestClient } from '../orchclient/index.js';
import { CLIENT_PREFIX, nodeTemplate, SIGNER_NODEAGENT_CLIENT } from './bootstrap.js';
import { CERT_BOOTSTRAP_CONFIG_MISSING } from './codes.js';
import { createCertificateManager, type CertificateManager } from './manager.js';
import type { CertificatePair, CertificateTemplate } from './pki.js';
import { createCsrRequester } from './request.js';
import { createFileStore } from './store.js';

export const SIGNER_NODEAGENT_SERVING = 'orch.io/nodeagent-serving';
export const SERVER_PREFIX = 'nodeagent-server';

/** Timing and test seams shared by both managers. */
export interface ManagerTuning {
  /** Validity, renewal times and the waits; the stored files' names. */
  readonly clock: Clock;
  readonly random?: () => number;
  readonly templateCheckMs?: number;
  /** Per request, default 15 minutes. */
  readonly waitTimeoutMs?: number;
  readonly pollIntervalMs?: number;
  /** spec.expirationSeconds of the requests (default none: the signer's default). */
  readonly expirationSeconds?: number;
}

export interface ClientManagerOptions extends ManagerTuning {
  readonly certDir: string;
  readonly nodeName: string;
  /** Its cluster (server, CA) is used; its user is replaced by the current pair. */
  readonly orchconfigPath: string;
  /** Used when there is no usable current pair. */
  readonly bootstrapOrchconfigPath?: string;
  readonly createClient: (connection: OrchConnection) => RestClient;
  readonly logger: Logger;
  /** After each rotation: rebuild or reload the REST clients (the --orchconfig file names the same link). */
  readonly onRotated?: (pair: CertificatePair) => void;
}

/** The cluster part of `connection` with the pair as its only credentials. */
export function withClientCertificate(connection: OrchConnection, pair: CertificatePair): OrchConnection {
  return {
    server: connection.server,
    insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
    ...(connection.ca === undefined ? {} : { ca: connection.ca }),
    ...(connection.tlsServerName === undefined ? {} : { tlsServerName: connection.tlsServerName }),
    clientCert: Buffer.from(pair.certPem, 'utf8'),
    clientKey: Buffer.from(pair.keyPem, 'utf8'),
  };
}

function tuning(t: ManagerTuning): ManagerTuning {
  return { ...Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined)), clock: t.clock };
}

/** The client certificate manager; call start() once the --orchconfig file exists (after bootstrap). */
export function createClientCertificateManager(o: ClientManagerOptions): CertificateManager {
  const logger = o.logger.named('client-certificate');
  const newClient = async (current: CertificatePair | undefined): Promise<RestClient> => {
    if (current !== undefined) return o.createClient(withClientCertificate(await loadOrchconfig(o.orchconfigPath), current));
    if (o.bootstrapOrchconfigPath === undefined) {
      throw new OrchError(CERT_BOOTSTRAP_CONFIG_MISSING, 'invalid', 'the client certificate is missing or expired and no --bootstrap-orchconfig is set to request a new one', { subject: '--bootstrap-orchconfig' });
    }
    logger.info('no usable client certificate; requesting one with the bootstrap credentials', { bootstrap: o.bootstrapOrchconfigPath });
    return o.createClient(await loadOrchconfig(o.bootstrapOrchconfigPath));
  };
  const template = nodeTemplate(o.nodeName);
  const t = tuning(o);
  return createCertificateManager({
    name: 'client',
    store: createFileStore({ dir: o.certDir, prefix: CLIENT_PREFIX, clock: o.clock }),
    template: () => template,
    request: createCsrRequester({ newClient, signerName: SIGNER_NODEAGENT_CLIENT, purpose: 'client auth', logger, ...t }),
    logger,
    ...(o.onRotated === undefined ? {} : { onRotated: o.onRotated }),
    ...t,
  });
}

/** A node address as in Node.status.addresses. */
export interface NodeAddress {
  readonly type: string;
  readonly address: string;
}

/**
 * The serving template for the node's addresses (upstream's addressesToHostnamesAndIPs, in
 * order, without duplicates); undefined when there is no IP address.
 */
export function servingTemplate(nodeName: string, addresses: readonly NodeAddress[]): CertificateTemplate | undefined {
  const dnsNames: string[] = [];
  const ips: string[] = [];
  for (const a of addresses) {
    if (a.address === '') continue;
    if (['Hostname', 'InternalDNS', 'ExternalDNS'].includes(a.type)) {
      if (!dnsNames.includes(a.address)) dnsNames.push(a.address);
    } else if (['InternalIP', 'ExternalIP'].includes(a.type) && isIP(a.address) !== 0) {
      if (!ips.includes(a.address)) ips.push(a.address);
    }
  }
  if (ips.length === 0) return undefined;
  return nodeTemplate(nodeName, dnsNames, ips);
}

export interface ServingManagerOptions extends ManagerTuning {
  readonly certDir: string;
  readonly nodeName: string;
  /** The node's current addresses (node status setter's view); looked at every templateCheckMs. */
  readonly addresses: () => readonly NodeAddress[];
  /** The agent's own connection (client certificate or token). */
  readonly orchconfigPath: string;
  readonly createClient: (connection: OrchConnection) => RestClient;
  readonly logger: Logger;
  /** After each rotation: swap the server's secure context. */
  readonly onRotated?: (pair: CertificatePair) => void;
}

/** The serving certificate manager; current() is what the agent's HTTPS server presents. */
export function createServingCertificateManager(o: ServingManagerOptions): CertificateManager {
  const logger = o.logger.named('serving-certificate');
  const t = tuning(o);
  return createCertificateManager({
    name: 'serving',
    store: createFileStore({ dir: o.certDir, prefix: SERVER_PREFIX, clock: o.clock }),
    template: () => servingTemplate(o.nodeName, o.addresses()),
    templateCheckMs: 1000,
    request: createCsrRequester({
      newClient: async () => o.createClient(await loadOrchconfig(o.orchconfigPath)),
      signerName: SIGNER_NODEAGENT_SERVING, purpose: 'server auth', logger, ...t,
    }),
    logger,
    ...(o.onRotated === undefined ? {} : { onRotated: o.onRotated }),
    ...t,
  });
}

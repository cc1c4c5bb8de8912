/**
 * Starts the agent's three listeners: the secure server (address:port, when enableServer; TLS,
 * authentication and authorization), the read-only server (readOnlyPort, 0 disables; no
 * authentication, read endpoints only) and the health server (healthzBindAddress:healthzPort,
 * 0 disables; /healthz only). Failing to start one stops the others already started.
 * With serverTLSBootstrap (and no tlsCertFile/tlsPrivateKeyFile) the secure server presents the
 * certificate of `servingCertificates` (no self-signed pair is made) and listens before one exists.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { hostname } from 'node:os';
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { createAuthenticator, createTokenWebhookAuthenticator, createX509Authenticator, type RequestAuthenticator } from '../authn/index.js';
import { alwaysAllow, createWebhookAuthorizer, type Authorizer } from '../authz/index.js';
import type { NodeagentConfiguration } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { createSubjectAccessReview, createTokenReview, type OrchClient } from '../orchclient/index.js';
import { createAuthFilter } from './auth-filter.js';
import type { VerbositySetter } from './debug/configz.js';
import type { HealthCheck } from './healthz.js';
import type { PodsView, ServerCri } from './host.js';
import { listen, type Listening } from './listen.js';
import type { AgentMetrics } from './metrics/agent-metrics.js';
import { createPipeline, type Pipeline } from './pipeline.js';
import { createRouteTable } from './router.js';
import { healthzRoutes, readOnlyRoutes, secureRoutes, type RouteDeps } from './routes.js';
import { createStatsProvider, type StatsProvider } from './stats/provider.js';
import { createDynamicServing, noServingCertificate, NO_SERVING_CERTIFICATE, type ServingCertificateSource } from './dynamic-tls.js';
import { loadClientCA, servingCertificate, tlsServerOptions, type ServingCertificate } from './tls.js';

export const SERVER_CONFIG_INVALID = 'SERVER_CONFIG_INVALID';

export interface ServersOptions {
  readonly config: NodeagentConfiguration;
  /** --cert-dir: where the self-signed serving pair is kept. */
  readonly certDir: string;
  /** --root-dir: the node file system of the stats. */
  readonly rootDir: string;
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  /** The API server client (--orchconfig); needed by webhook authentication and authorization. */
  readonly orchClient?: OrchClient;
  readonly pods: PodsView;
  readonly cri: ServerCri;
  readonly healthChecks: readonly HealthCheck[];
  /** The logger root (/debug/flags/v changes its verbosity). */
  readonly logs: VerbositySetter;
  readonly gates: { enabled(name: string): boolean };
  readonly metrics: AgentMetrics;
  readonly logger: Logger;
  /** The agent's clock: stats, the self-signed certificate, timestamps of the answers. */
  readonly clock: Clock;
  /** Default: one built from `cri` (10 s cache). */
  readonly stats?: StatsProvider;
  /** The node's log directory of /logs/ (default /var/log). */
  readonly logDir?: string;
  /** serverTLSBootstrap: the requested serving certificate (the serving certificate manager; needs --orchconfig). */
  readonly servingCertificates?: ServingCertificateSource;
}

export interface Servers {
  /** certificate: the given or self-signed pair; absent when it is requested (serverTLSBootstrap). */
  readonly secure?: Listening & { readonly certificate?: ServingCertificate };
  readonly readOnly?: Listening;
  readonly healthz?: Listening;
  /** Closes every listener and connection. Idempotent. */
  close(): Promise<void>;
}

function reviewClient(o: ServersOptions, what: string, field: string): OrchClient {
  if (o.orchClient !== undefined) return o.orchClient;
  throw new OrchError(SERVER_CONFIG_INVALID, 'invalid', `${what} needs the API server: give --orchconfig or turn ${field} off`, { subject: field });
}

function securityOf(o: ServersOptions, clientCA: Buffer | undefined): { authenticator: RequestAuthenticator; authorizer: Authorizer } {
  const a = o.config.authentication;
  const authenticators: RequestAuthenticator[] = [];
  if (clientCA !== undefined) authenticators.push(createX509Authenticator());
  if (a.webhook.enabled) {
    const client = reviewClient(o, 'webhook token authentication', 'authentication.webhook.enabled');
    authenticators.push(createTokenWebhookAuthenticator({ review: (token) => createTokenReview(client, token), cacheTtlMs: a.webhook.cacheTTL / 1e6, clock: o.clock }));
  }
  const z = o.config.authorization;
  let authorizer: Authorizer = alwaysAllow();
  if (z.mode === 'Webhook') {
    const client = reviewClient(o, 'Webhook authorization', 'authorization.mode');
    authorizer = createWebhookAuthorizer({
      review: (spec) => createSubjectAccessReview(client, spec),
      authorizedTtlMs: z.webhook.cacheAuthorizedTTL / 1e6,
      unauthorizedTtlMs: z.webhook.cacheUnauthorizedTTL / 1e6,
      clock: o.clock,
    });
  }
  return { authenticator: createAuthenticator({ authenticators, anonymous: a.anonymous.enabled }), authorizer };
}

function serve(server: Server, pipeline: Pipeline): void {
  server.on('request', pipeline.onRequest);
  server.on('upgrade', pipeline.onUpgrade);
}

export async function startServers(o: ServersOptions): Promise<Servers> {
  const c = o.config;
  const log = o.logger;
  const stats = o.stats ?? createStatsProvider({ cri: o.cri, rootDir: o.rootDir, podLogsRoot: o.config.podLogsDir, clock: o.clock, logger: log.named('stats') });
  const deps: RouteDeps = {
    config: c, nodeName: o.nodeName, rootDir: o.rootDir, pods: o.pods, cri: o.cri, stats, metrics: o.metrics,
    healthChecks: o.healthChecks, logs: o.logs, gateEnabled: (n) => o.gates.enabled(n), logger: log, clock: o.clock,
    ...(o.logDir === undefined ? {} : { logDir: o.logDir }),
  };
  const started: Listening[] = [];
  const result: { -readonly [K in keyof Servers]?: Servers[K] } = {};
  try {
    if (c.enableServer) {
      const clientCA = await loadClientCA(c.authentication.x509.clientCAFile);
      const settings = { tlsMinVersion: c.tlsMinVersion, tlsCipherSuites: c.tlsCipherSuites, ...(clientCA === undefined ? {} : { clientCA }) };
      const requested = c.serverTLSBootstrap && c.tlsCertFile === '' && c.tlsPrivateKeyFile === '';
      const certificate = requested ? undefined : await servingCertificate({
        tlsCertFile: c.tlsCertFile, tlsPrivateKeyFile: c.tlsPrivateKeyFile, certDir: o.certDir,
        commonName: o.nodeName, altNames: [o.nodeName, hostname(), ...o.nodeIPs], logger: log, clock: o.clock,
      });
      const { authenticator, authorizer } = securityOf(o, clientCA);
      if (requested && o.servingCertificates === undefined) {
        log.warn('serverTLSBootstrap is on but no serving certificate can be requested without the API server (--orchconfig); TLS handshakes on the secure port fail');
      }
      const dynamic = requested ? createDynamicServing({ source: o.servingCertificates ?? noServingCertificate, settings: tlsServerOptions(settings), logger: log }) : undefined;
      const server = createHttpsServer(dynamic?.serverOptions() ?? tlsServerOptions({ ...settings, ...(certificate === undefined ? {} : { serving: certificate }) }));
      const detach = dynamic?.attach(server);
      serve(server, createPipeline({
        routes: createRouteTable(secureRoutes(deps)), serverType: 'readwrite', observer: o.metrics.requests, logger: log,
        auth: createAuthFilter({ authenticator, authorizer, nodeName: o.nodeName, logger: log }),
      }));
      server.on('tlsClientError', (err, socket) => {
        // Without a certificate a client that sent no SNI fails in OpenSSL: report upstream's reason.
        if (dynamic !== undefined && dynamic.context() === undefined) log.info('TLS handshake failed', { remote: socket.remoteAddress, err: NO_SERVING_CERTIFICATE });
        else log.v(4, 'TLS handshake failed', { err: err.message });
      });
      let l: Listening;
      try {
        l = await listen(server, { address: c.address, port: c.port, logger: log });
      } catch (err) {
        detach?.();
        throw err;
      }
      const secure: Listening = { port: l.port, address: l.address, close: async () => { detach?.(); await l.close(); } };
      started.push(secure);
      result.secure = { ...secure, ...(certificate === undefined ? {} : { certificate }) };
      const shown = certificate === undefined ? 'requested from the API server (serverTLSBootstrap)' : certificate.origin === 'files' ? certificate.certPath : `${certificate.certPath} (${certificate.origin})`;
      log.info('Secure server listening', { address: l.address, port: l.port, certificate: shown });
    }
    if (c.readOnlyPort !== 0) {
      const server = createHttpServer();
      serve(server, createPipeline({ routes: createRouteTable(readOnlyRoutes(deps)), serverType: 'readonly', observer: o.metrics.requests, logger: log }));
      const l = await listen(server, { address: c.address, port: c.readOnlyPort, logger: log });
      started.push(l);
      result.readOnly = l;
      log.info('Read-only server listening', { address: l.address, port: l.port });
    }
    if (c.healthzPort !== 0) {
      result.healthz = await startHealthListener(c.healthzBindAddress, c.healthzPort, o.healthChecks, log);
      started.push(result.healthz);
      log.info('Health server listening', { address: result.healthz.address, port: result.healthz.port });
    }
  } catch (err) {
    await Promise.all(started.map((l) => l.close()));
    throw err;
  }
  const { secure, readOnly, healthz } = result;
  return {
    ...(secure === undefined ? {} : { secure }), ...(readOnly === undefined ? {} : { readOnly }), ...(healthz === undefined ? {} : { healthz }),
    close: async () => { await Promise.all(started.map((l) => l.close())); },
  };
}

/** The health listener alone: /healthz and /healthz/<check>, 404 for anything else. */
export async function startHealthListener(address: string, port: number, checks: readonly HealthCheck[], logger: Logger): Promise<Listening> {
  const server = createHttpServer();
  serve(server, createPipeline({ routes: createRouteTable(healthzRoutes(checks)), serverType: 'healthz', logger }));
  return listen(server, { address, port, logger });
}

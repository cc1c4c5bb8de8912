/**
 * Part of orch-apiserver's composition root: loads the credentials and policy, prepares the
 * PKI, opens the store, builds the registries of every resource, starts the namespace
 * lifecycle, the CSR signer, the HTTPS listener and the control loops (apiserver-controllers.ts),
 * and writes the admin orchconfig.
 * orch-apiserver.ts imports this file only to serve: the storage clients (gRPC for etcd) are
 * slow to load, and --help, --version and flag errors must answer at once.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { messageOf } from '../api/errors.js';
import { SECOND } from '../api/duration.js';
import { realClock } from '../api/clock.js';
import { createAuthenticator, loadTokenFile, reviewToken, type AuthenticatorOptions } from '../apiserver/authn/index.js';
import { withDefaultTolerationSeconds, withServiceAccountAdmission, type ServiceAccountAdmissionOptions } from '../apiserver/admission/index.js';
import { alwaysAllow, loadPolicyFile, policyAuthorizer, type Authorizer } from '../apiserver/authz/index.js';
import { loadConsoleAssets, withConsole } from '../apiserver/console/index.js';
import { evictionConnector } from '../apiserver/eviction/index.js';
import { createApiServerMetrics, instrumentStore } from '../apiserver/metrics/index.js';
import { nodeProxyConnectors } from '../apiserver/nodeproxy/index.js';
import { ResourceRegistry, type ResourceDefinition } from '../apiserver/registry/index.js';
import { nodeMetricsDefinition, podMetricsDefinition, resourceMetrics } from '../apiserver/resourcemetrics/index.js';
import { csrDefinition, CsrSigner } from '../apiserver/resources/certificates/index.js';
import { compatibilityView } from '../apiserver/resources/common/index.js';
import { configMapDefinition } from '../apiserver/resources/configmaps/index.js';
import { eventDefinitions } from '../apiserver/resources/events/index.js';
import { leaseDefinition } from '../apiserver/resources/leases/index.js';
import { namespaceDefinition, NamespaceLifecycle } from '../apiserver/resources/namespaces/index.js';
import { nodeDefinition } from '../apiserver/resources/nodes/index.js';
import { bindFromBody, bindingSchema, podDefinitionWith } from '../apiserver/resources/pods/index.js';
import { reviewDefinitions } from '../apiserver/resources/reviews/index.js';
import { secretDefinition } from '../apiserver/resources/secrets/index.js';
import { serviceAccountDefinition } from '../apiserver/resources/serviceaccounts/index.js';
import { serviceAccountTokens } from '../apiserver/serviceaccount/index.js';
import { DEFAULT_WATCH_BUDGET, WatchBudget } from '../apiserver/watch/index.js';
import {
  createFlowControlMetrics, FLOWCONTROL_GROUP, FlowControl, FlowControlSource, flowSchemaDefinition, maxInFlightGate, priorityAndFairnessGate, priorityLevelDefinition,
} from '../apiserver/flowcontrol/index.js';
import { actionConnector, createRouter, type Connector, type VersionInfo } from '../apiserver/routing/index.js';
import {
  apiServerGateEnabled, ensureCa, ensureServing, issueClientCertificate, localServerUrl, startHttpsServer, waitForStore, writeKubeconfig, x509Library,
  type ApiServerOptions,
} from '../apiserver/server/index.js';
import { openEtcdStore, openSqliteStore, type ManagedStore } from '../apiserver/storage/index.js';
import { loadTracingConfigFile, tracedHandler, tracedStore } from '../apiserver/tracing/index.js';
import { withWatchCache } from '../apiserver/watchcache/index.js';
import { startTracing, type TracingProvider } from '../api/tracing/index.js';
import { VERSION } from '../version.js';
import { controllerManager } from './apiserver-controllers.js';
import { storageDefinitions } from './apiserver-storage.js';
import { Informer, registryClient } from '../apiserver/controllers/client/index.js';

export type Log = (message: string) => void;

function versionInfo(): VersionInfo {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return {
    major: '1',
    minor: '30',
    gitVersion: `v1.30.0+orch-${VERSION}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${arch}`,
  };
}

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${flag}: cannot read ${file}: ${messageOf(err)}`, { cause: err });
  }
}

function openStore(o: ApiServerOptions, log: Log): Promise<ManagedStore> {
  const bookmarkIntervalMs = Math.max(10, Math.round(o.watchBookmarkInterval / 1e6));
  const compactionIntervalMs = Math.round(o.etcdCompactionInterval / 1e6);
  if (o.storageBackend === 'etcd3') return openEtcdStore({ endpoints: o.etcdServers, prefix: o.etcdPrefix, bookmarkIntervalMs, compactionIntervalMs, log });
  // SQLite keeps the change log of the last compaction interval (as etcd keeps one interval of history).
  const history = compactionIntervalMs === 0 ? { historyRevisions: Number.MAX_SAFE_INTEGER } : { historyRevisions: 0, historyMs: compactionIntervalMs, compactionIntervalMs };
  return openSqliteStore({ dataDir: o.dataDir, bookmarkIntervalMs, log, ...history });
}

/** The provider of --tracing-config-file; undefined (nothing of OpenTelemetry loaded) without it. */
async function startApiServerTracing(o: ApiServerOptions, log: Log): Promise<TracingProvider | undefined> {
  if (o.tracingConfigFile === '') return undefined;
  const config = loadTracingConfigFile(o.tracingConfigFile);
  log(`tracing: exporting to ${config.endpoint}, samplingRatePerMillion ${config.samplingRatePerMillion}`);
  return startTracing({
    ...config, serviceName: 'orch-apiserver', hostName: hostname(), clock: realClock,
    onExportError: (message) => { log(`tracing: ${message}`); },
  });
}

/** Starts serving; resolves to the function that shuts everything down, in reverse order. */
export async function serve(o: ApiServerOptions, log: Log): Promise<() => Promise<void>> {
  const tokens = o.tokenAuthFile === '' ? undefined : loadTokenFile(o.tokenAuthFile);
  const authorizer = o.authorizationMode === 'Policy' ? policyAuthorizer(loadPolicyFile(o.authorizationPolicyFile)) : alwaysAllow;
  const ca = await ensureCa(o.certDir);
  const clientCaPems = [ca.certPem, ...(o.clientCaFile === '' ? [] : [readPem(o.clientCaFile, '--client-ca-file')])];
  const hosts = ['localhost', '127.0.0.1', '::1', hostname()];
  if (isIP(o.bindAddress) !== 0 && o.bindAddress !== '0.0.0.0' && o.bindAddress !== '::' && !hosts.includes(o.bindAddress)) hosts.push(o.bindAddress);
  const serving = o.tlsCertFile === ''
    ? await ensureServing(o.certDir, ca, hosts)
    : { certPem: readPem(o.tlsCertFile, '--tls-cert-file'), keyPem: readPem(o.tlsPrivateKeyFile, '--tls-private-key-file') };

  const nodeagentTls = {
    ...(o.nodeagentClientCertificate === '' ? {} : { cert: readPem(o.nodeagentClientCertificate, '--nodeagent-client-certificate') }),
    ...(o.nodeagentClientKey === '' ? {} : { key: readPem(o.nodeagentClientKey, '--nodeagent-client-key') }),
    ...(o.nodeagentCertificateAuthority === '' ? {} : { ca: readPem(o.nodeagentCertificateAuthority, '--nodeagent-certificate-authority') }),
  };
  const x509 = await x509Library();
  const consoleAssets = loadConsoleAssets();
  const version = versionInfo();
  const apiMetrics = createApiServerMetrics({ version });
  const tracing = await startApiServerTracing(o, log);
  const timedStore = instrumentStore(await openStore(o, log), (operation, type, seconds) => {
    apiMetrics.storageCall(operation, type, seconds);
  });
  // The watch cache is in front of the timed store (storage metrics count the store's calls
  // only) and behind tracing; its prefixes are known once the definitions are.
  let store: ManagedStore = timedStore;
  try {
    await waitForStore(timedStore, 15_000);
    const registries: ResourceRegistry[] = [];
    const registryOf = (group: string, plural: string): ResourceRegistry => {
      const found = registries.find((r) => r.def.group === group && r.def.plural === plural);
      if (found === undefined) throw new Error(`no registry for ${plural}.${group}`);
      return found;
    };
    const saTokens = serviceAccountTokens({
      signingKeyFile: o.serviceAccountSigningKeyFile, keyFiles: o.serviceAccountKeyFile, dataDir: o.dataDir, issuers: o.serviceAccountIssuer,
      apiAudiences: o.apiAudiences, maxExpirationSeconds: Math.round(o.serviceAccountMaxTokenExpiration / SECOND), maxRequestBytes: o.maxRequestBytes,
      registryOf: (plural) => registryOf('', plural), clock: realClock,
    });
    const authn: AuthenticatorOptions = { ...(tokens === undefined ? {} : { tokens }), serviceAccounts: saTokens.authenticator };
    const definitions = [...resourceDefinitions(o, {
      x509, reviewToken: (token, audiences) => reviewToken(token, audiences, authn), authorizer,
      serviceAccount: (namespace, name) => saTokens.lookup('serviceaccounts', namespace, name),
    }), ...storageDefinitions(registryOf)];
    const cached = o.watchCache ? withWatchCache(timedStore, {
      prefixes: cachedPrefixes(definitions), clock: realClock, log, onEvent: (resource) => { apiMetrics.watchCacheEvent(resource); },
    }) : timedStore;
    store = tracing === undefined ? cached : tracedStore(cached, tracing.tracer('orch-apiserver/storage'));
    const lifecycle = new NamespaceLifecycle({
      store,
      namespaces: new ResourceRegistry({ def: namespaceDefinition, store }),
      // Reviews are never stored, metrics are read-only: nothing of theirs is left in a namespace.
      content: () => registries.filter((r) => r.def.namespaced && r.def.review === undefined && r.def.verbs.includes('delete')),
      log,
    });
    for (const def of definitions) registries.push(new ResourceRegistry({ def, store, admission: lifecycle.admission }));
    // The resource metrics API (and the metrics.k8s.io view kubectl top looks for), read from the node agents.
    // The collector reads the nodes from an informer: a list of every node each 10 s is megabytes a time for a large cluster.
    const metricsNodes = new Informer({ client: registryClient({ registry: registryOf('', 'nodes'), clock: realClock }), clock: realClock, log, what: 'nodes (resource metrics)' });
    const metrics = resourceMetrics({
      nodes: () => registryOf('', 'nodes'),
      currentNodes: async () => {
        await metricsNodes.ready();
        return metricsNodes.list();
      },
      pods: () => registryOf('', 'pods'), tls: nodeagentTls, log,
    });
    for (const def of [nodeMetricsDefinition, podMetricsDefinition]) {
      registries.push(new ResourceRegistry({ def, store: metrics.store }), new ResourceRegistry({ def: compatibilityView(def, 'metrics.k8s.io', false), store: metrics.store }));
    }
    metrics.collector.start();
    await lifecycle.start();
    const signer = new CsrSigner({ store, registry: registryOf('certificates.orch.io', 'certificatesigningrequests'), x509, ca, log });
    await signer.start();
    const flowControl = new FlowControl({
      clock: realClock, serverConcurrencyLimit: o.maxRequestsInflight + o.maxMutatingRequestsInflight, maxWaitMs: 15_000,
      metrics: createFlowControlMetrics(apiMetrics.registry),
    });
    const flowControlSource = new FlowControlSource({
      flowControl, clock: realClock, log,
      levels: registryClient({ registry: registryOf(FLOWCONTROL_GROUP, 'prioritylevelconfigurations'), clock: realClock }),
      schemas: registryClient({ registry: registryOf(FLOWCONTROL_GROUP, 'flowschemas'), clock: realClock }),
    });
    await flowControlSource.start();
    const router = createRouter({
      registries,
      authenticator: createAuthenticator(authn),
      authorizer,
      maxRequestBytes: o.maxRequestBytes,
      version,
      metrics: apiMetrics,
      gate: o.enablePriorityAndFairness ? priorityAndFairnessGate(flowControl) : maxInFlightGate({ readOnly: o.maxRequestsInflight, mutating: o.maxMutatingRequestsInflight }),
      watchBudget: new WatchBudget({ ...DEFAULT_WATCH_BUDGET, clock: realClock, onTerminated: (resource) => { apiMetrics.watcherTerminated(resource); } }),
      ready: async () => {
        await store.currentRevision();
      },
      log,
      serverAddress: `${o.bindAddress}:${o.securePort}`,
      connectors: [
        ...nodeProxyConnectors({ nodes: () => registryOf('', 'nodes'), tls: nodeagentTls, log }),
        evictionConnector({ maxRequestBytes: o.maxRequestBytes }),
        bindingConnector(o),
        saTokens.connector,
      ],
    });
    const https = await startHttpsServer({
      bindAddress: o.bindAddress,
      port: o.securePort,
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      clientCaPems,
      handler: withConsole({ assets: consoleAssets, next: tracing === undefined ? router.handle : tracedHandler(router.handle, tracing.tracer('orch-apiserver')) }),
      upgrade: router.upgrade,
      http2MaxStreams: o.http2MaxStreamsPerConnection,
    });
    if (o.writeAdminOrchconfig !== '') {
      const client = await issueClientCertificate(ca, 'admin', ['system:masters']);
      writeKubeconfig(o.writeAdminOrchconfig, {
        server: localServerUrl(o.bindAddress, https.port),
        caPem: o.tlsCertFile === '' ? ca.certPem : serving.certPem,
        client,
      });
      log(`wrote the admin orchconfig ${o.writeAdminOrchconfig}`);
    }
    log(`serving on https://${o.bindAddress}:${https.port} (storage ${o.storageBackend}, authorization ${o.authorizationMode})`);
    const controllers = controllerManager(o, registryOf, o.tlsCertFile === '' ? ca.certPem : serving.certPem, log);
    controllers.start();
    return async () => {
      await controllers.close();
      await https.close();
      await metrics.collector.close();
      await metricsNodes.close();
      await signer.close();
      await flowControlSource.close();
      await lifecycle.close();
      await store.close();
      await tracing?.shutdown();
    };
  } catch (err) {
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
}

/** The stored resources the watch cache keeps (upstream caches every resource but events; reviews are never stored). */
function cachedPrefixes(definitions: readonly ResourceDefinition[]): string[] {
  return [...new Set(definitions.filter((d) => d.review === undefined && d.storage !== 'events').map((d) => `/${d.storage}/`))];
}

/**
 * Every served resource. Compatibility views serve the groups kubectl hard-codes:
 * certificates.k8s.io/v1 certificatesigningrequests (in discovery, before certificates.orch.io:
 * kubectl certificate approve resolves the plural there), and hidden ones kubectl posts to
 * directly: authorization.k8s.io/v1 selfsubjectaccessreviews and selfsubjectrulesreviews
 * (auth can-i), authentication.k8s.io selfsubjectreviews (auth whoami).
 */
function resourceDefinitions(o: ApiServerOptions, deps: {
  x509: Parameters<typeof csrDefinition>[0];
  reviewToken: Parameters<typeof reviewDefinitions>[0]['reviewToken'];
  authorizer: Authorizer;
  serviceAccount: ServiceAccountAdmissionOptions['serviceAccount'];
}): ResourceDefinition[] {
  const reviews = reviewDefinitions({ reviewToken: deps.reviewToken, authorizer: deps.authorizer });
  const csr = csrDefinition(deps.x509);
  const hiddenViews = (plural: string, group: string, versions: readonly string[]): ResourceDefinition[] => {
    const def = reviews.find((d) => d.plural === plural);
    return def === undefined ? [] : versions.map((v) => compatibilityView(def, group, true, v));
  };
  return [
    namespaceDefinition,
    ...eventDefinitions({ ttlSeconds: Math.max(1, Math.round(o.eventTtl / SECOND)) }),
    nodeDefinition,
    withServiceAccountAdmission(
      withDefaultTolerationSeconds(podDefinitionWith({ inPlacePodVerticalScaling: apiServerGateEnabled(o.featureGates, 'InPlacePodVerticalScaling') }), { notReadySeconds: o.defaultNotReadyTolerationSeconds, unreachableSeconds: o.defaultUnreachableTolerationSeconds }),
      { serviceAccount: deps.serviceAccount, clock: realClock },
    ),
    configMapDefinition,
    secretDefinition,
    serviceAccountDefinition,
    leaseDefinition,
    flowSchemaDefinition,
    priorityLevelDefinition,
    ...reviews,
    // Before the canonical group: kubectl certificate approve maps the bare plural to the first
    // group that serves it and accepts only certificates.k8s.io objects.
    compatibilityView(csr, 'certificates.k8s.io', false),
    csr,
    ...hiddenViews('selfsubjectaccessreviews', 'authorization.k8s.io', ['v1']),
    ...hiddenViews('selfsubjectrulesreviews', 'authorization.k8s.io', ['v1']),
    // kubectl auth whoami tries v1, then the beta and alpha names (kubectl 1.27: alpha first).
    ...hiddenViews('selfsubjectreviews', 'authentication.k8s.io', ['v1', 'v1beta1', 'v1alpha1']),
  ];
}

/** pods/binding: a POST of a Binding assigns the pod to a node (the scheduler's write, and any client's). */
function bindingConnector(o: ApiServerOptions): Connector {
  return actionConnector({
    group: '', resource: 'pods', subresource: 'binding',
    body: { group: '', version: 'v1', kind: 'Binding', schema: bindingSchema },
    act: async (r) => ({ code: 201, body: await bindFromBody(r.registry, { user: r.user, now: r.now }, r.namespace, r.name, r.body, r.dryRun) }),
  }, { maxRequestBytes: o.maxRequestBytes });
}

/**
 * The composition root of orch-apiserver: parses the command line, loads the credentials and
 * policy, prepares the PKI, opens the store, builds the registries of every resource, starts the
 * namespace lifecycle and the HTTPS listener, writes the admin orchconfig, and shuts everything
 * down on SIGTERM/SIGINT. This is the only file that knows every concrete module.
 *
 * Exit codes: 0 after --help, --version or a clean shutdown; 1 for invalid flags, unreadable
 * files or a failed start.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { messageOf } from '../api/errors.js';
import { SECOND } from '../api/duration.js';
import type { ResourceDefinition } from '../apiserver/registry/index.js';
import type { VersionInfo } from '../apiserver/routing/index.js';
import {
  ensureCa, ensureServing, helpText, issueClientCertificate, localServerUrl, parseCommandLine, startHttpsServer, waitForStore, writeKubeconfig, x509Library,
  type ApiServerOptions,
} from '../apiserver/server/index.js';
import type { ManagedStore } from '../apiserver/storage/index.js';
import { VERSION } from '../version.js';

/**
 * The serving modules, loaded only to serve: the storage clients (gRPC for etcd) are slow to
 * load, and --help, --version and flag errors must answer at once.
 */
async function servingModules() {
  const [authn, authz, registry, events, namespaces, routing, storage, resources, nodeproxy] = await Promise.all([
    import('../apiserver/authn/index.js'),
    import('../apiserver/authz/index.js'),
    import('../apiserver/registry/index.js'),
    import('../apiserver/resources/events/index.js'),
    import('../apiserver/resources/namespaces/index.js'),
    import('../apiserver/routing/index.js'),
    import('../apiserver/storage/index.js'),
    coreResources(),
    import('../apiserver/nodeproxy/index.js'),
  ]);
  return { ...authn, ...authz, ...registry, ...events, ...namespaces, ...routing, ...storage, ...resources, ...nodeproxy };
}

/** The resources of the core, coordination, authentication, authorization and certificates groups. */
async function coreResources() {
  const [common, configmaps, secrets, serviceaccounts, nodes, pods, leases, reviews, certificates] = await Promise.all([
    import('../apiserver/resources/common/index.js'),
    import('../apiserver/resources/configmaps/index.js'),
    import('../apiserver/resources/secrets/index.js'),
    import('../apiserver/resources/serviceaccounts/index.js'),
    import('../apiserver/resources/nodes/index.js'),
    import('../apiserver/resources/pods/index.js'),
    import('../apiserver/resources/leases/index.js'),
    import('../apiserver/resources/reviews/index.js'),
    import('../apiserver/resources/certificates/index.js'),
  ]);
  return {
    compatibilityView: common.compatibilityView,
    configMapDefinition: configmaps.configMapDefinition,
    secretDefinition: secrets.secretDefinition,
    serviceAccountDefinition: serviceaccounts.serviceAccountDefinition,
    nodeDefinition: nodes.nodeDefinition,
    podDefinition: pods.podDefinition,
    leaseDefinition: leases.leaseDefinition,
    reviewDefinitions: reviews.reviewDefinitions,
    csrDefinition: certificates.csrDefinition,
    CsrSigner: certificates.CsrSigner,
  };
}

type Modules = Awaited<ReturnType<typeof servingModules>>;

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString()} orch-apiserver: ${message}\n`);
}

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

function openStore(m: Modules, o: ApiServerOptions): Promise<ManagedStore> {
  const bookmarkIntervalMs = Math.max(10, Math.round(o.watchBookmarkInterval / 1e6));
  const compactionIntervalMs = Math.round(o.etcdCompactionInterval / 1e6);
  if (o.storageBackend === 'etcd3') return m.openEtcdStore({ endpoints: o.etcdServers, prefix: o.etcdPrefix, bookmarkIntervalMs, compactionIntervalMs, log });
  // SQLite keeps the change log of the last compaction interval (as etcd keeps one interval of history).
  const history = compactionIntervalMs === 0 ? { historyRevisions: Number.MAX_SAFE_INTEGER } : { historyRevisions: 0, historyMs: compactionIntervalMs, compactionIntervalMs };
  return m.openSqliteStore({ dataDir: o.dataDir, bookmarkIntervalMs, log, ...history });
}

async function run(o: ApiServerOptions): Promise<() => Promise<void>> {
  const m = await servingModules();
  const tokens = o.tokenAuthFile === '' ? undefined : m.loadTokenFile(o.tokenAuthFile);
  const authorizer = o.authorizationMode === 'Policy' ? m.policyAuthorizer(m.loadPolicyFile(o.authorizationPolicyFile)) : m.alwaysAllow;
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
  const store = await openStore(m, o);
  try {
    await waitForStore(store, 15_000);
    const definitions = resourceDefinitions(m, o, {
      x509,
      userOfToken: (token) => m.userOfToken(token, tokens),
      authorizer,
    });
    const registries: InstanceType<Modules['ResourceRegistry']>[] = [];
    const lifecycle = new m.NamespaceLifecycle({
      store,
      namespaces: new m.ResourceRegistry({ def: m.namespaceDefinition, store }),
      // Reviews are never stored: nothing of theirs is left in a namespace.
      content: () => registries.filter((r) => r.def.namespaced && r.def.review === undefined),
      log,
    });
    for (const def of definitions) registries.push(new m.ResourceRegistry({ def, store, admission: lifecycle.admission }));
    const registryOf = (group: string, plural: string): InstanceType<Modules['ResourceRegistry']> => {
      const found = registries.find((r) => r.def.group === group && r.def.plural === plural);
      if (found === undefined) throw new Error(`no registry for ${plural}.${group}`);
      return found;
    };
    await lifecycle.start();
    const signer = new m.CsrSigner({ store, registry: registryOf('certificates.orch.io', 'certificatesigningrequests'), x509, ca, log });
    await signer.start();
    const router = m.createRouter({
      registries,
      authenticator: m.createAuthenticator(tokens === undefined ? {} : { tokens }),
      authorizer,
      maxRequestBytes: o.maxRequestBytes,
      version: versionInfo(),
      ready: async () => {
        await store.currentRevision();
      },
      log,
      serverAddress: `${o.bindAddress}:${o.securePort}`,
      connectors: m.nodeProxyConnectors({ nodes: () => registryOf('', 'nodes'), tls: nodeagentTls, log }),
    });
    const https = await startHttpsServer({
      bindAddress: o.bindAddress,
      port: o.securePort,
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      clientCaPems,
      handler: router.handle,
      upgrade: router.upgrade,
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
    return async () => {
      await https.close();
      await signer.close();
      await lifecycle.close();
      await store.close();
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * Every served resource. Two compatibility views serve the groups kubectl hard-codes:
 * certificates.k8s.io/v1 certificatesigningrequests (in discovery, before certificates.orch.io:
 * kubectl certificate approve resolves the plural there) and authorization.k8s.io/v1
 * selfsubjectaccessreviews (hidden: kubectl auth can-i posts to it directly).
 */
function resourceDefinitions(m: Modules, o: ApiServerOptions, deps: {
  x509: Parameters<Modules['csrDefinition']>[0];
  userOfToken: Parameters<Modules['reviewDefinitions']>[0]['userOfToken'];
  authorizer: Parameters<Modules['reviewDefinitions']>[0]['authorizer'];
}): ResourceDefinition[] {
  const reviews = m.reviewDefinitions({ userOfToken: deps.userOfToken, authorizer: deps.authorizer });
  const csr = m.csrDefinition(deps.x509);
  const selfReview = reviews.find((d) => d.plural === 'selfsubjectaccessreviews');
  return [
    m.namespaceDefinition,
    ...m.eventDefinitions({ ttlSeconds: Math.max(1, Math.round(o.eventTtl / SECOND)) }),
    m.nodeDefinition,
    m.podDefinition,
    m.configMapDefinition,
    m.secretDefinition,
    m.serviceAccountDefinition,
    m.leaseDefinition,
    ...reviews,
    // Before the canonical group: kubectl certificate approve maps the bare plural to the first
    // group that serves it and accepts only certificates.k8s.io objects.
    m.compatibilityView(csr, 'certificates.k8s.io', false),
    csr,
    ...(selfReview === undefined ? [] : [m.compatibilityView(selfReview, 'authorization.k8s.io', true)]),
  ];
}

async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseCommandLine(argv);
  } catch (err) {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\nRun 'orch-apiserver --help' for the list of flags.\n`);
    return 1;
  }
  if (command.action === 'help') {
    process.stdout.write(helpText());
    return 0;
  }
  if (command.action === 'version') {
    process.stdout.write(`orch-apiserver ${VERSION}\n`);
    return 0;
  }
  let stop: () => Promise<void>;
  try {
    stop = await run(command.options);
  } catch (err) {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string): void => {
      log(`${signal}: shutting down`);
      resolve();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  await stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\n`);
    process.exitCode = 1;
  },
);

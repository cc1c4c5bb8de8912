/**
 * The command line of orch-apiserver, with kube-apiserver's flag names and pflag's rules:
 * `--flag=value` or `--flag value`; booleans bare or `--flag=true|false`; `-h`/`--help`;
 * `--version`; `--` ends the flags. Every problem is collected and reported at once, naming the
 * flag; the caller exits 1.
 */
import { formatDuration, parseDurationField, SECOND } from '../../api/duration.js';
import { OrchError } from '../../api/errors.js';
import { controllerListProblems } from '../controllers/index.js';
import { quoteValue } from '../../api/quote.js';

export type AuthorizationMode = 'AlwaysAllow' | 'Policy';
export type StorageBackend = 'sqlite' | 'etcd3';

export interface ApiServerOptions {
  readonly bindAddress: string;
  readonly securePort: number;
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  readonly certDir: string;
  readonly clientCaFile: string;
  readonly tokenAuthFile: string;
  readonly authorizationMode: AuthorizationMode;
  readonly authorizationPolicyFile: string;
  /** A TracingConfiguration file ('' : no tracing, nothing of OpenTelemetry loaded). */
  readonly tracingConfigFile: string;
  readonly storageBackend: StorageBackend;
  readonly dataDir: string;
  readonly etcdServers: readonly string[];
  readonly etcdPrefix: string;
  /** Nanoseconds; 0 disables compaction. */
  readonly etcdCompactionInterval: number;
  /** Nanoseconds. */
  readonly eventTtl: number;
  readonly maxRequestBytes: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS offered to HTTP/2 clients; 0: the default (100, as upstream's). */
  readonly http2MaxStreamsPerConnection: number;
  /** Upstream's in-flight limits: with API Priority and Fairness their sum is the server's concurrency. */
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly enablePriorityAndFairness: boolean;
  /** Nanoseconds. */
  readonly watchBookmarkInterval: number;
  /** Serve reads with resourceVersion "0" or "N" from the watch cache (upstream's --watch-cache). */
  readonly watchCache: boolean;
  /** The node proxy (pods/log, exec, attach, portforward): TLS toward the node agents. */
  readonly nodeagentClientCertificate: string;
  readonly nodeagentClientKey: string;
  readonly nodeagentCertificateAuthority: string;
  readonly writeAdminOrchconfig: string;
  /** The control loops (kube-controller-manager's --controllers grammar). */
  readonly controllers: readonly string[];
  readonly leaderElect: boolean;
  /** Nanoseconds. */
  readonly leaderElectLeaseDuration: number;
  readonly leaderElectRenewDeadline: number;
  readonly leaderElectRetryPeriod: number;
  readonly leaderElectResourceName: string;
  readonly leaderElectResourceNamespace: string;
  /** Nanoseconds. */
  readonly nodeMonitorPeriod: number;
  readonly nodeMonitorGracePeriod: number;
  readonly nodeStartupGracePeriod: number;
  readonly terminatedPodGcThreshold: number;
  readonly defaultNotReadyTolerationSeconds: number;
  readonly defaultUnreachableTolerationSeconds: number;
  /** Service account tokens: the first issues, all are accepted. */
  readonly serviceAccountIssuer: readonly string[];
  /** Files of the keys that verify tokens (with the signing key's own). */
  readonly serviceAccountKeyFile: readonly string[];
  /** The key that signs tokens ('' : one made once under --data-dir). */
  readonly serviceAccountSigningKeyFile: string;
  /** Nanoseconds; 0: no limit. */
  readonly serviceAccountMaxTokenExpiration: number;
  /** What tokens must be meant for (empty: the issuers). */
  readonly apiAudiences: readonly string[];
  /** --feature-gates: the gates this server knows (API_SERVER_GATES), as given. */
  readonly featureGates: Readonly<Record<string, boolean>>;
}

/** The feature gates orch-apiserver acts on, with their stage and default (upstream v1.28); AllAlpha and AllBeta switch them by stage. */
export const API_SERVER_GATES: ReadonlyMap<string, { readonly stage: 'alpha' | 'beta'; readonly default: boolean }> = new Map([
  ['InPlacePodVerticalScaling', { stage: 'alpha', default: false }],
]);

/** Whether a gate is on: its own entry, else AllAlpha/AllBeta for its stage, else its default. */
export function apiServerGateEnabled(gates: Readonly<Record<string, boolean>>, name: string): boolean {
  const spec = API_SERVER_GATES.get(name);
  if (spec === undefined) return false;
  return gates[name] ?? (spec.stage === 'alpha' ? gates.AllAlpha : gates.AllBeta) ?? spec.default;
}

export type CommandLine =
  | { readonly action: 'help' }
  | { readonly action: 'version' }
  | { readonly action: 'run'; readonly options: ApiServerOptions };

/** `array`: repeatable, each occurrence one value (pflag's stringArray); the first replaces the default. */
type Kind = 'string' | 'int' | 'duration' | 'list' | 'array' | 'bool' | 'gates';

interface Flag {
  readonly name: string;
  readonly kind: Kind;
  readonly option: keyof ApiServerOptions;
  readonly help: string;
}

export const DEFAULTS: ApiServerOptions = {
  bindAddress: '0.0.0.0',
  securePort: 6443,
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  certDir: '/var/lib/orch-apiserver/pki',
  clientCaFile: '',
  tokenAuthFile: '',
  authorizationMode: 'AlwaysAllow',
  authorizationPolicyFile: '',
  tracingConfigFile: '',
  storageBackend: 'sqlite',
  dataDir: '/var/lib/orch-apiserver',
  etcdServers: [],
  etcdPrefix: '/registry',
  etcdCompactionInterval: 300 * SECOND,
  eventTtl: 3600 * SECOND,
  maxRequestBytes: 3 * 1024 * 1024,
  http2MaxStreamsPerConnection: 0,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  enablePriorityAndFairness: true,
  watchBookmarkInterval: 60 * SECOND,
  watchCache: true,
  nodeagentClientCertificate: '',
  nodeagentClientKey: '',
  nodeagentCertificateAuthority: '',
  writeAdminOrchconfig: '',
  controllers: ['*'],
  leaderElect: true,
  leaderElectLeaseDuration: 15 * SECOND,
  leaderElectRenewDeadline: 10 * SECOND,
  leaderElectRetryPeriod: 2 * SECOND,
  leaderElectResourceName: 'orch-controllers',
  leaderElectResourceNamespace: 'orch-system',
  nodeMonitorPeriod: 5 * SECOND,
  nodeMonitorGracePeriod: 40 * SECOND,
  nodeStartupGracePeriod: 60 * SECOND,
  terminatedPodGcThreshold: 12500,
  defaultNotReadyTolerationSeconds: 300,
  defaultUnreachableTolerationSeconds: 300,
  serviceAccountIssuer: ['https://orch.default.svc.cluster.local'],
  serviceAccountKeyFile: [],
  serviceAccountSigningKeyFile: '',
  serviceAccountMaxTokenExpiration: 0,
  apiAudiences: [],
  featureGates: {},
};

export const FLAGS: readonly Flag[] = [
  { name: 'bind-address', kind: 'string', option: 'bindAddress', help: 'The IP address on which to listen for the --secure-port port.' },
  { name: 'secure-port', kind: 'int', option: 'securePort', help: 'The port on which to serve HTTPS with authentication and authorization (1-65535).' },
  { name: 'tls-cert-file', kind: 'string', option: 'tlsCertFile', help: 'File with the default x509 serving certificate (with intermediates after it). If empty, a self-signed CA and a serving pair are generated once in --cert-dir.' },
  { name: 'tls-private-key-file', kind: 'string', option: 'tlsPrivateKeyFile', help: 'File with the x509 private key matching --tls-cert-file.' },
  { name: 'cert-dir', kind: 'string', option: 'certDir', help: 'The directory of the generated CA (ca.crt, ca.key) and serving pair (apiserver.crt, apiserver.key; SANs localhost, 127.0.0.1, ::1 and the hostname). Ignored for serving when --tls-cert-file is given; the CA still signs the admin orchconfig and is trusted for client certificates.' },
  { name: 'client-ca-file', kind: 'string', option: 'clientCaFile', help: 'PEM bundle of CAs that sign client certificates: such a request is authenticated as the certificate\'s CommonName, with its Organizations as groups. The server\'s own CA is always trusted as well.' },
  { name: 'token-auth-file', kind: 'string', option: 'tokenAuthFile', help: 'CSV file of bearer tokens: token,user,uid,"group1,group2" per line.' },
  { name: 'authorization-mode', kind: 'string', option: 'authorizationMode', help: 'AlwaysAllow, or Policy (rules from --authorization-policy-file; the group system:masters may do everything, authenticated users may read discovery, OpenAPI, version and health).' },
  { name: 'authorization-policy-file', kind: 'string', option: 'authorizationPolicyFile', help: 'With --authorization-mode=Policy: a YAML or JSON list of rules {user?, group?, verbs, resources?, apiGroups?, namespaces?, nonResourcePaths?}; see docs/apiserver/authentication.md.' },
  { name: 'tracing-config-file', kind: 'string', option: 'tracingConfigFile', help: 'File with the apiserver tracing configuration (kind TracingConfiguration: endpoint, samplingRatePerMillion): requests and storage calls are traced and exported over OTLP/gRPC.' },
  { name: 'storage-backend', kind: 'string', option: 'storageBackend', help: 'sqlite (one file in --data-dir) or etcd3 (--etcd-servers).' },
  { name: 'data-dir', kind: 'string', option: 'dataDir', help: 'The directory of the SQLite database (--storage-backend=sqlite).' },
  { name: 'etcd-servers', kind: 'list', option: 'etcdServers', help: 'Comma-separated etcd client URLs (--storage-backend=etcd3), e.g. http://127.0.0.1:2379.' },
  { name: 'etcd-prefix', kind: 'string', option: 'etcdPrefix', help: 'The prefix of every etcd key.' },
  { name: 'etcd-compaction-interval', kind: 'duration', option: 'etcdCompactionInterval', help: 'The interval of storage compaction; history (for watches and continue tokens) of at least one interval is kept. Applies to both backends (SQLite: its change log). 0 disables compaction.' },
  { name: 'event-ttl', kind: 'duration', option: 'eventTtl', help: 'Amount of time to retain events (every write of an event restarts it).' },
  { name: 'max-request-bytes', kind: 'int', option: 'maxRequestBytes', help: 'The largest accepted request body, in bytes; larger ones are answered 413.' },
  { name: 'watch-cache', kind: 'bool', option: 'watchCache', help: 'Keep every resource but events in memory (a list, then a watch of the store) and answer gets and lists with resourceVersion "0" (any state) or "N" (not older than N) from it; false: every read goes to the store.' },
  { name: 'http2-max-streams-per-connection', kind: 'int', option: 'http2MaxStreamsPerConnection', help: 'The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means the default, 100.' },
  { name: 'watch-bookmark-interval', kind: 'duration', option: 'watchBookmarkInterval', help: 'How often watches that allow bookmarks receive a BOOKMARK event.' },
  { name: 'nodeagent-client-certificate', kind: 'string', option: 'nodeagentClientCertificate', help: 'Client certificate the server presents to nodeagents (node proxy).' },
  { name: 'nodeagent-client-key', kind: 'string', option: 'nodeagentClientKey', help: 'Private key of --nodeagent-client-certificate.' },
  { name: 'nodeagent-certificate-authority', kind: 'string', option: 'nodeagentCertificateAuthority', help: 'CA bundle that verifies the serving certificates of nodeagents.' },
  { name: 'controllers', kind: 'list', option: 'controllers', help: "The control loops to run (kube-controller-manager's grammar): '*' enables all, 'foo' enables foo, '-foo' disables foo; empty runs none. Loops: scheduler, node-lifecycle-controller, taint-eviction-controller, pod-garbage-collector-controller, serviceaccount-controller, root-ca-certificate-publisher-controller, persistentvolume-binder-controller, persistentvolume-attach-detach-controller, persistentvolumeclaim-protection-controller, persistentvolume-protection-controller, ephemeral-volume-controller." },
  { name: 'max-requests-inflight', kind: 'int', option: 'maxRequestsInflight', help: 'The most non-mutating requests in flight at once (0: no limit); with API Priority and Fairness, added to --max-mutating-requests-inflight as the server\'s concurrency limit.' },
  { name: 'max-mutating-requests-inflight', kind: 'int', option: 'maxMutatingRequestsInflight', help: 'The most mutating requests in flight at once (0: no limit); with API Priority and Fairness, see --max-requests-inflight.' },
  { name: 'enable-priority-and-fairness', kind: 'bool', option: 'enablePriorityAndFairness', help: 'Queue and dispatch requests by the FlowSchema and PriorityLevelConfiguration objects (flowcontrol.apiserver.orch.io); false: the plain max-in-flight limits.' },
  { name: 'leader-elect', kind: 'bool', option: 'leaderElect', help: 'Run the control loops only on the replica that holds the leader election Lease (for several API servers on one etcd).' },
  { name: 'leader-elect-lease-duration', kind: 'duration', option: 'leaderElectLeaseDuration', help: 'How long other candidates wait after the leader\'s last renewal before they take the lead.' },
  { name: 'leader-elect-renew-deadline', kind: 'duration', option: 'leaderElectRenewDeadline', help: 'How long the leader keeps trying to renew before it stops leading; less than the lease duration.' },
  { name: 'leader-elect-retry-period', kind: 'duration', option: 'leaderElectRetryPeriod', help: 'How long candidates wait between attempts to acquire or renew the lead.' },
  { name: 'leader-elect-resource-name', kind: 'string', option: 'leaderElectResourceName', help: 'The name of the coordination.orch.io Lease of the leader election.' },
  { name: 'leader-elect-resource-namespace', kind: 'string', option: 'leaderElectResourceNamespace', help: 'The namespace of that Lease.' },
  { name: 'node-monitor-period', kind: 'duration', option: 'nodeMonitorPeriod', help: 'How often the node lifecycle controller checks that node agents are alive.' },
  { name: 'node-monitor-grace-period', kind: 'duration', option: 'nodeMonitorGracePeriod', help: 'How long a node agent may go without renewing its Lease or posting its status before its node becomes Unknown and is tainted unreachable.' },
  { name: 'node-startup-grace-period', kind: 'duration', option: 'nodeStartupGracePeriod', help: 'The same for a node that never posted a Ready condition.' },
  { name: 'terminated-pod-gc-threshold', kind: 'int', option: 'terminatedPodGcThreshold', help: 'How many terminated (Succeeded or Failed) pods are kept; the oldest beyond it are removed. 0 or less keeps all.' },
  { name: 'default-not-ready-toleration-seconds', kind: 'int', option: 'defaultNotReadyTolerationSeconds', help: 'The tolerationSeconds of the node.orch.io/not-ready:NoExecute toleration added to pods that have none (DefaultTolerationSeconds).' },
  { name: 'default-unreachable-toleration-seconds', kind: 'int', option: 'defaultUnreachableTolerationSeconds', help: 'The same for node.orch.io/unreachable:NoExecute.' },
  { name: 'service-account-issuer', kind: 'array', option: 'serviceAccountIssuer', help: 'The iss of the service account tokens this server issues (the first) and accepts (all); repeat the flag for several.' },
  { name: 'service-account-signing-key-file', kind: 'string', option: 'serviceAccountSigningKeyFile', help: 'PEM private key (RSA or ECDSA) that signs service account tokens. If empty, an ECDSA key is made once in --data-dir (service-account.key); several servers on one etcd need the same key.' },
  { name: 'service-account-key-file', kind: 'array', option: 'serviceAccountKeyFile', help: 'PEM file of public or private keys (RSA or ECDSA) that verify service account tokens, besides the signing key; repeatable.' },
  { name: 'service-account-max-token-expiration', kind: 'duration', option: 'serviceAccountMaxTokenExpiration', help: 'The longest validity of a requested token (longer requests are shortened, with a warning); 0: no limit, else at least 1h.' },
  { name: 'api-audiences', kind: 'list', option: 'apiAudiences', help: 'Audiences a service account token must name to authenticate requests (and the default of token requests). Empty: the --service-account-issuer values.' },
  { name: 'feature-gates', kind: 'gates', option: 'featureGates', help: 'A set of key=value pairs that describe feature gates: AllAlpha=true|false (ALPHA - default=false), AllBeta=true|false (BETA - default=false), InPlacePodVerticalScaling=true|false (ALPHA - default=false: the cpu and memory of a running pod\'s containers may be changed by an update, with resizePolicy).' },
  { name: 'write-admin-orchconfig', kind: 'string', option: 'writeAdminOrchconfig', help: 'Write a kubeconfig-format file here at start: the CA, the server https://127.0.0.1:<secure-port> and an admin client certificate (CN admin, O system:masters) signed by the server\'s CA.' },
];

function defaultText(flag: Flag): string {
  const value = DEFAULTS[flag.option];
  if (flag.kind === 'duration') return formatDuration(value as number);
  if (Array.isArray(value)) return value.length === 0 ? '' : value.join(',');
  if (flag.kind === 'gates') return Object.entries(value as Record<string, boolean>).map(([k, v]) => `${k}=${v}`).join(',');
  return typeof value === 'object' ? '' : String(value);
}

export function helpText(): string {
  const lines = FLAGS.map((f) => {
    const type = f.kind === 'list' ? 'strings' : f.kind === 'array' ? 'stringArray' : f.kind === 'gates' ? 'mapStringBool' : f.kind;
    const def = defaultText(f);
    return `      --${f.name} ${type}\n            ${f.help}${def === '' ? '' : ` (default ${quoteValue(def)})`}`;
  });
  return [
    'orch-apiserver - the cluster API server (kube-apiserver compatible) nodeagent registers with',
    '',
    'Usage:',
    '  orch-apiserver [flags]',
    '',
    'Flags:',
    ...lines,
    '  -h, --help\n            Print this help and exit',
    '      --version\n            Print the version and exit',
    '',
  ].join('\n');
}

function setValue(flag: Flag, text: string, out: Record<string, unknown>, problems: string[]): void {
  const where = `--${flag.name}`;
  switch (flag.kind) {
    case 'string':
      out[flag.option] = text;
      return;
    case 'list':
      out[flag.option] = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
      return;
    case 'array':
      // The first occurrence replaces the default, later ones add to it.
      out[flag.option] = out[flag.option] === DEFAULTS[flag.option] ? [text] : [...(out[flag.option] as string[]), text];
      return;
    case 'int':
      if (!/^-?[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text))) problems.push(`invalid argument ${quoteValue(text)} for ${where}: not an integer`);
      else out[flag.option] = Number(text);
      return;
    case 'duration':
      try {
        out[flag.option] = parseDurationField(text, where);
      } catch (err) {
        problems.push(`invalid argument ${quoteValue(text)} for ${where}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return;
    case 'bool':
      out[flag.option] = text === 'true';
      return;
    case 'gates': {
      // pflag's mapStringBool: each occurrence adds to the map; upstream's messages for an unknown gate or a bad value.
      const gates: Record<string, boolean> = { ...(out[flag.option] as Record<string, boolean>) };
      for (const pair of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
        const eq = pair.indexOf('=');
        const name = eq < 0 ? pair : pair.slice(0, eq).trim();
        const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
        if (eq < 0) problems.push(`invalid argument ${quoteValue(text)} for ${where}: missing bool value for ${name}`);
        else if (name !== 'AllAlpha' && name !== 'AllBeta' && !API_SERVER_GATES.has(name)) {
          problems.push(`invalid argument ${quoteValue(text)} for ${where}: unrecognized feature gate: ${name} (known: AllAlpha, AllBeta, ${[...API_SERVER_GATES.keys()].join(', ')})`);
        } else if (value !== 'true' && value !== 'false') problems.push(`invalid argument ${quoteValue(text)} for ${where}: invalid value of ${name}=${value}, err: strconv.ParseBool: parsing ${quoteValue(value)}: invalid syntax`);
        else gates[name] = value === 'true';
      }
      out[flag.option] = gates;
      return;
    }
  }
}

function check(o: ApiServerOptions, problems: string[]): void {
  if (o.securePort < 1 || o.securePort > 65535) problems.push(`--secure-port ${o.securePort} must be between 1 and 65535`);
  if (!['AlwaysAllow', 'Policy'].includes(o.authorizationMode)) problems.push(`--authorization-mode ${quoteValue(o.authorizationMode)}: supported values are AlwaysAllow and Policy`);
  if (o.authorizationMode === 'Policy' && o.authorizationPolicyFile === '') problems.push('--authorization-policy-file is required with --authorization-mode=Policy');
  if (!['sqlite', 'etcd3'].includes(o.storageBackend)) problems.push(`--storage-backend ${quoteValue(o.storageBackend)}: supported values are sqlite and etcd3`);
  if (o.storageBackend === 'etcd3' && o.etcdServers.length === 0) problems.push('--etcd-servers is required with --storage-backend=etcd3');
  for (const url of o.etcdServers) if (!/^https?:\/\/[^/]+\/?$/.test(url)) problems.push(`--etcd-servers: ${quoteValue(url)} is not an http(s)://host:port URL`);
  if ((o.tlsCertFile === '') !== (o.tlsPrivateKeyFile === '')) problems.push('--tls-cert-file and --tls-private-key-file must be given together');
  if (o.etcdCompactionInterval !== 0 && o.etcdCompactionInterval < 100_000_000) problems.push(`--etcd-compaction-interval ${formatDuration(o.etcdCompactionInterval)} must be 0 or at least 100ms`);
  if (o.eventTtl < SECOND) problems.push(`--event-ttl ${formatDuration(o.eventTtl)} must be at least 1s`);
  if (o.watchBookmarkInterval < 10_000_000) problems.push(`--watch-bookmark-interval ${formatDuration(o.watchBookmarkInterval)} must be at least 10ms`);
  if (o.maxRequestsInflight < 0) problems.push(`--max-requests-inflight ${o.maxRequestsInflight} must be 0 or more`);
  if (o.maxMutatingRequestsInflight < 0) problems.push(`--max-mutating-requests-inflight ${o.maxMutatingRequestsInflight} must be 0 or more`);
  if (o.enablePriorityAndFairness && o.maxRequestsInflight + o.maxMutatingRequestsInflight === 0) problems.push('--max-requests-inflight and --max-mutating-requests-inflight must not both be 0 with --enable-priority-and-fairness');
  if (o.http2MaxStreamsPerConnection < 0) problems.push(`--http2-max-streams-per-connection ${o.http2MaxStreamsPerConnection} must be 0 (the default, 100) or more`);
  if (o.maxRequestBytes < 1024) problems.push(`--max-request-bytes ${o.maxRequestBytes} must be at least 1024`);
  if (o.bindAddress === '') problems.push('--bind-address must not be empty');
  if (o.etcdPrefix !== '' && (!o.etcdPrefix.startsWith('/') || o.etcdPrefix.endsWith('/'))) problems.push(`--etcd-prefix ${quoteValue(o.etcdPrefix)} must start with / and not end with /`);
  problems.push(...controllerListProblems(o.controllers));
  checkControllers(o, problems);
  if (o.serviceAccountIssuer.length === 0 || o.serviceAccountIssuer.some((i) => i === '')) problems.push('--service-account-issuer must not be empty');
  if (o.serviceAccountMaxTokenExpiration !== 0 && o.serviceAccountMaxTokenExpiration < 3600 * SECOND) {
    problems.push(`--service-account-max-token-expiration ${formatDuration(o.serviceAccountMaxTokenExpiration)} must be 0 or at least 1h`);
  }
}

/** Upstream's checks of the leader election periods, and positive periods and seconds. */
function checkControllers(o: ApiServerOptions, problems: string[]): void {
  for (const [flag, value] of [
    ['--leader-elect-lease-duration', o.leaderElectLeaseDuration], ['--leader-elect-renew-deadline', o.leaderElectRenewDeadline],
    ['--leader-elect-retry-period', o.leaderElectRetryPeriod], ['--node-monitor-period', o.nodeMonitorPeriod],
    ['--node-monitor-grace-period', o.nodeMonitorGracePeriod], ['--node-startup-grace-period', o.nodeStartupGracePeriod],
  ] as const) {
    if (value <= 0) problems.push(`${flag} ${formatDuration(value)} must be greater than zero`);
  }
  if (o.leaderElectLeaseDuration <= o.leaderElectRenewDeadline) {
    problems.push(`--leader-elect-lease-duration ${formatDuration(o.leaderElectLeaseDuration)} must be greater than --leader-elect-renew-deadline ${formatDuration(o.leaderElectRenewDeadline)}`);
  }
  if (o.leaderElectRenewDeadline <= o.leaderElectRetryPeriod * 1.2) {
    problems.push(`--leader-elect-renew-deadline ${formatDuration(o.leaderElectRenewDeadline)} must be greater than 1.2 times --leader-elect-retry-period ${formatDuration(o.leaderElectRetryPeriod)}`);
  }
  if (o.leaderElectResourceName === '' || o.leaderElectResourceNamespace === '') problems.push('--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty');
  for (const [flag, value] of [['--default-not-ready-toleration-seconds', o.defaultNotReadyTolerationSeconds], ['--default-unreachable-toleration-seconds', o.defaultUnreachableTolerationSeconds]] as const) {
    if (value < 0) problems.push(`${flag} ${value} must not be negative`);
  }
}

/** Parses argv (without the program name). Throws OrchError APISERVER_INVALID_FLAGS listing every problem. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const out: Record<string, unknown> = { ...DEFAULTS };
  const problems: string[] = [];
  let action: 'help' | 'version' | 'run' = 'run';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      if (i + 1 < argv.length) problems.push(`unexpected arguments: ${argv.slice(i + 1).join(' ')}`);
      break;
    }
    if (arg === '-h' || arg === '--help') {
      action = 'help';
      continue;
    }
    if (arg === '--version' || arg === '--version=true') {
      if (action !== 'help') action = 'version';
      continue;
    }
    if (!arg.startsWith('--')) {
      problems.push(arg.startsWith('-') ? `unknown shorthand flag: ${arg}` : `unexpected argument ${quoteValue(arg)}: orch-apiserver takes flags only`);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).replaceAll('_', '-');
    const flag = FLAGS.find((f) => f.name === name);
    if (flag === undefined) {
      problems.push(`unknown flag: --${name}`);
      continue;
    }
    let text: string;
    if (eq >= 0) {
      text = arg.slice(eq + 1);
    } else if (flag.kind === 'bool') {
      text = 'true';
    } else if (i + 1 < argv.length) {
      i += 1;
      text = argv[i] ?? '';
    } else {
      problems.push(`flag needs an argument: --${name}`);
      continue;
    }
    setValue(flag, text, out, problems);
  }
  if (action !== 'run' && problems.length === 0) return { action };
  const options = out as unknown as ApiServerOptions;
  if (problems.length === 0) check(options, problems);
  if (problems.length > 0) {
    throw new OrchError('APISERVER_INVALID_FLAGS', 'invalid', problems.join('\n'), { subject: problems[0]?.match(/--[a-z-]+/)?.[0] ?? 'flags' });
  }
  return { action: 'run', options };
}

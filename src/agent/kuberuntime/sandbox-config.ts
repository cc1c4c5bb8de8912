/**
 * The CRI sandbox configuration of a pod (upstream: generatePodSandboxConfig): metadata with
 * the attempt, hostname (empty on the host network: runc fails otherwise), the log directory
 * `<podLogsRoot>/<namespace>_<name>_<uid>`, DNS, port mappings from the containers' ports,
 * labels (the pod's plus the agent's identity labels), annotations, and the Linux part:
 * cgroup parent (always set), namespaces, sysctls and the pod's security context. Pure.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import path from 'node:path';
import { OrchError } from '../../api/errors.js';
import { validateDNS1123Label } from '../../api/labels.js';
import type { NodePod, PodIdentity } from '../../api/pod/index.js';
import type { DnsConfig, NamespaceOption, PodSandboxConfig, PortMapping, Protocol } from '../runtime/cri/index.js';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_TERMINATION_GRACE_PERIOD_ANNOTATION, POD_UID_LABEL } from './labels.js';
import { DEFAULT_SECCOMP_PROFILE_ROOT, KUBERUNTIME_SANDBOX_CONFIG_INVALID, seccompProfile, type SeccompSettings } from './seccomp.js';
import { quoteValue } from '../../api/quote.js';

export { KUBERUNTIME_SANDBOX_CONFIG_INVALID };
export const DEFAULT_POD_LOGS_ROOT = '/var/log/pods';
const HOSTNAME_MAX_LENGTH = 63;
const FQDN_MAX_LENGTH = 64;
/** upstream's default when the spec leaves it unset (the API defaults it to 30). */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** `<root>/<namespace>_<name>_<uid>` (upstream: BuildPodLogsDirectory). */
export function podLogsDirectory(root: string, id: PodIdentity): string {
  return path.join(root, `${id.namespace}_${id.name}_${id.uid}`);
}

/**
 * The pod a directory name under the pod logs root belongs to (`<namespace>_<name>_<uid>`;
 * upstream: parsePodUIDFromLogsDirectory); undefined for a name not of that form (namespaces
 * and names are DNS names, which hold no `_`).
 */
export function parsePodLogsDirectoryName(name: string): PodIdentity | undefined {
  const m = /^([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)_([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)_([^_/]+)$/.exec(name);
  return m === null ? undefined : { namespace: m[1] ?? '', name: m[2] ?? '', uid: m[3] ?? '' };
}

/** The labels that identify the pod's objects in the runtime. */
export function podLabels(id: PodIdentity): Record<string, string> {
  return { [POD_UID_LABEL]: id.uid, [POD_NAME_LABEL]: id.name, [POD_NAMESPACE_LABEL]: id.namespace };
}

/** terminationGracePeriodSeconds, or upstream's default. */
export function podGracePeriodSeconds(pod: Pod): number {
  return pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}

function invalid(message: string, subject: string): OrchError {
  return new OrchError(KUBERUNTIME_SANDBOX_CONFIG_INVALID, 'invalid', message, { subject });
}

/**
 * The hostname and domain of a pod (upstream: GeneratePodHostNameAndDomain): spec.hostname or
 * the pod's name, cut to 63 characters; the domain `<subdomain>.<namespace>.svc.<clusterDomain>`
 * when a subdomain is set. Throws KUBERUNTIME_SANDBOX_CONFIG_INVALID for invalid names.
 */
export function podHostnameAndDomain(pod: NodePod, clusterDomain: string): { hostname: string; domain: string } {
  const id = pod.metadata;
  let hostname = id.name;
  const specHostname = pod.spec?.hostname ?? '';
  if (specHostname !== '') {
    const problems = validateDNS1123Label(specHostname);
    if (problems.length > 0) throw invalid(`pod hostname ${quoteValue(specHostname)} is not valid: ${problems.join('; ')}`, 'spec.hostname');
    hostname = specHostname;
  }
  if (hostname.length > HOSTNAME_MAX_LENGTH) {
    hostname = hostname.slice(0, HOSTNAME_MAX_LENGTH).replace(/[-.]+$/, '');
    if (hostname === '') throw invalid(`hostname of pod ${id.name} is empty after truncation`, 'spec.hostname');
  }
  let domain = '';
  const subdomain = pod.spec?.subdomain ?? '';
  if (subdomain !== '') {
    const problems = validateDNS1123Label(subdomain);
    if (problems.length > 0) throw invalid(`pod subdomain ${quoteValue(subdomain)} is not valid: ${problems.join('; ')}`, 'spec.subdomain');
    domain = `${subdomain}.${id.namespace}.svc.${clusterDomain}`;
  }
  return { hostname, domain };
}

/** The hostname the sandbox gets: empty on the host network, the FQDN with setHostnameAsFQDN. */
export function sandboxHostname(pod: NodePod, clusterDomain: string): string {
  if (pod.spec?.hostNetwork === true) return '';
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  if (pod.spec?.setHostnameAsFQDN !== true || domain === '') return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX_LENGTH) {
    throw invalid(`FQDN ${fqdn} is too long (${FQDN_MAX_LENGTH} characters is the max, ${fqdn.length} characters requested)`, 'spec.setHostnameAsFQDN');
  }
  return fqdn;
}

/** Network, PID and IPC namespaces of the pod and its containers (upstream: namespacesForPod). */
export function namespaceOptions(pod: Pod): NamespaceOption {
  const spec = pod.spec;
  return {
    network: spec?.hostNetwork === true ? 'NODE' : 'POD',
    pid: spec?.hostPID === true ? 'NODE' : spec?.shareProcessNamespace === true ? 'POD' : 'CONTAINER',
    ipc: spec?.hostIPC === true ? 'NODE' : 'POD',
  };
}

function protocolOf(protocol: string | undefined): Protocol {
  return protocol === 'UDP' || protocol === 'SCTP' ? protocol : 'TCP';
}

/** Every container port, as upstream passes them (the runtime maps those with a host port). */
export function portMappings(pod: Pod): PortMapping[] {
  const mappings: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      mappings.push({
        protocol: protocolOf(p.protocol),
        containerPort: p.containerPort,
        ...(p.hostPort === undefined ? {} : { hostPort: p.hostPort }),
        ...(p.hostIP === undefined || p.hostIP === '' ? {} : { hostIp: p.hostIP }),
      });
    }
  }
  return mappings;
}

/** A sysctl name with '/' separators in the dotted form (upstream: ConvertSysctlVariableToDotsSeparator). */
export function sysctlName(name: string): string {
  const first = /[./]/.exec(name);
  if (first === null || first[0] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** The pod's supplemental groups, with fsGroup appended as upstream does. */
export function podSupplementalGroups(pod: Pod): number[] {
  const security = pod.spec?.securityContext;
  const groups = [...(security?.supplementalGroups ?? [])];
  if (security?.fsGroup !== undefined) groups.push(security.fsGroup);
  return groups;
}

function hasPrivilegedContainer(pod: Pod): boolean {
  const all: Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.some((c) => c.securityContext?.privileged === true);
}

export interface SandboxConfigInput {
  readonly pod: NodePod;
  readonly attempt: number;
  readonly podLogsRoot: string;
  readonly cgroupParent: string;
  readonly dns: DnsConfig;
  readonly clusterDomain: string;
  /** Default: no RuntimeDefault fallback, profiles under DEFAULT_SECCOMP_PROFILE_ROOT. */
  readonly seccomp?: SeccompSettings;
}

/** The whole sandbox configuration. Throws KUBERUNTIME_SANDBOX_CONFIG_INVALID for an unusable hostname. */
export function makeSandboxConfig(input: SandboxConfigInput): PodSandboxConfig {
  const { pod } = input;
  const id = pod.metadata;
  const security = pod.spec?.securityContext;
  const sysctls = Object.fromEntries((security?.sysctls ?? []).map((s) => [sysctlName(s.name), s.value]));
  return {
    metadata: { name: id.name, namespace: id.namespace, uid: id.uid, attempt: input.attempt },
    hostname: sandboxHostname(pod, input.clusterDomain),
    logDirectory: podLogsDirectory(input.podLogsRoot, id),
    dnsConfig: input.dns,
    portMappings: portMappings(pod),
    labels: { ...(id.labels ?? {}), ...podLabels(id) },
    annotations: { ...(id.annotations ?? {}), [POD_TERMINATION_GRACE_PERIOD_ANNOTATION]: String(podGracePeriodSeconds(pod)) },
    linux: {
      cgroupParent: input.cgroupParent,
      sysctls,
      securityContext: {
        namespaceOptions: namespaceOptions(pod),
        privileged: hasPrivilegedContainer(pod),
        ...(security?.runAsUser === undefined ? {} : { runAsUser: { value: security.runAsUser } }),
        ...(security?.runAsGroup === undefined ? {} : { runAsGroup: { value: security.runAsGroup } }),
        ...(podSupplementalGroups(pod).length === 0 ? {} : { supplementalGroups: podSupplementalGroups(pod) }),
        seccomp: seccompProfile(pod, undefined, input.seccomp ?? { runtimeDefault: false, profileRoot: DEFAULT_SECCOMP_PROFILE_ROOT }),
      },
    },
  };
}

/**
 * The runtime manager (upstream: kubeGenericRuntimeManager): syncPod carries out the actions
 * computed for a pod (compute-actions.ts) in upstream's SyncPod order, one step each:
 *
 *   1. killPodOrContainers: the pod (all containers, then the sandboxes) when a new sandbox is
 *      needed or nothing is left to run; otherwise the containers to restart; then, with
 *      InPlacePodVerticalScaling, the running containers resized in place (resize.ts);
 *   2. removeInitContainers: all init container instances before a new sandbox, else the older
 *      exited ones;
 *   3. sandboxConfig: the sandbox's configuration, which the containers are created with too;
 *   4. ensureSandbox: a new sandbox when one is needed (its log directory first), reading its
 *      IPs, under a start slot (semaphore.ts);
 *   5. startContainers, the ephemeral containers that never ran (in the running pod, a
 *      targetContainerName's process namespace);
 *   6. startContainers, the init containers to start (without sidecars: the next one); the
 *      sync stops there while init containers are not done;
 *   7. startContainers, the containers to start, each on its own (one's failure does not stop
 *      another).
 *
 * Containers are killed with their preStop hook and Killing event (kill.ts); containers that
 * failed a liveness or startup probe (the prober's results) are killed and restarted.
 *
 * Back-offs live here (restart: per pod, container and spec hash; image pulls: per pod and
 * image) and tell the worker when to sync again.
 */
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { messageOf } from '../../api/errors.js';
import { readNodeCapacity } from '../../api/node-capacity.js';
import { BackOff, DEFAULT_CONTAINER_BACKOFF, DEFAULT_IMAGE_BACKOFF } from './backoff.js';
import { traced } from '../../api/tracing/index.js';
import { changesRuntime, computePodActions, podSandboxChanged, type PodActions } from './compute-actions.js';
import { formatPod } from './container-config.js';
import { MISSING_CLUSTER_DNS, podDnsConfig, readHostDns, type DnsWarning } from './dns.js';
import type { NodeCapacity } from './env.js';
import { isRuntimeUnreachable } from './errors.js';
import { ImagePuller } from './images.js';
import { killContainer, killPod, removePod } from './kill.js';
import { emitEvent } from './lifecycle.js';
import type { RuntimeManagerOptions } from './options.js';
import { DEFAULT_CFS_PERIOD_US } from './resources.js';
import { inPlaceResizeOf, updateContainers } from './resize.js';
import { DEFAULT_POD_LOGS_ROOT, makeSandboxConfig } from './sandbox-config.js';
import { DEFAULT_SECCOMP_PROFILE_ROOT, type SeccompSettings } from './seccomp.js';
import { PodStartSlots, type PodStartSlot } from './semaphore.js';
import { startContainer, type ContainerKind, type StartContext, type StartDeps } from './start-container.js';
import { listRunningPods, readPodStatus, readStatuses, toRuntimeSandboxStatus } from './status.js';
import { SyncRun, type AppliedActions } from './sync-run.js';
import type { PodRuntimeManager, PodSyncResult, RunningPod, RuntimePodStatus } from './types.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';
import type { NodePod } from '../../api/pod/index.js';

/** CAP_SYS_RESOURCE in this process's effective set: needed to lower an OOM score adjustment. */
export function hasSysResourceCapability(statusFile = '/proc/self/status'): boolean {
  const line = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync(statusFile, 'utf8'));
  return line?.[1] !== undefined && (BigInt(`0x${line[1]}`) & (1n << 24n)) !== 0n;
}

/** The running pod of a status (upstream: ConvertPodStatusToRunningPod, with every container). */
export function runningPodOf(status: RuntimePodStatus): RunningPod {
  return {
    uid: status.uid,
    name: status.name,
    namespace: status.namespace,
    sandboxIds: status.sandboxes.map((s) => s.id),
    containers: status.containers.map((c) => ({ id: c.id, name: c.name, state: c.state, image: c.image })),
  };
}

/** The sandbox a sync starts containers in, and the pod's IPs it gave. */
interface SandboxToStartIn {
  readonly id: string;
  readonly podIPs: readonly string[];
}

class RuntimeManager implements PodRuntimeManager {
  private readonly now: () => number;
  private readonly podLogsRoot: string;
  private readonly puller: ImagePuller;
  private readonly backOff: BackOff;
  private readonly startDeps: StartDeps;
  private readonly seccomp: SeccompSettings;
  /** Pods between their RunPodSandbox and their first container's start. */
  private readonly startSlots: PodStartSlots;
  private oomWarned = false;
  /** Pods told MissingClusterDNS (once per pod, as an event); the node-wide line is logged once per start. */
  private readonly missingClusterDns = new Set<string>();
  private missingClusterDnsLogged = false;
  private oomCapable: boolean | undefined;

  constructor(private readonly options: RuntimeManagerOptions) {
    let machine: NodeCapacity | undefined;
    this.now = () => options.clock.now();
    this.podLogsRoot = options.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
    this.startSlots = new PodStartSlots({ limit: options.maxConcurrentPodStarts });
    this.backOff = new BackOff(options.containerBackOff ?? DEFAULT_CONTAINER_BACKOFF, options.clock);
    this.puller = new ImagePuller({
      images: options.images,
      logger: options.logger,
      clock: options.clock,
      serialize: options.serializeImagePulls ?? true,
      maxParallel: options.maxParallelImagePulls ?? 0,
      qps: options.registryPullQPS ?? 5,
      burst: options.registryBurst ?? 10,
      backOff: options.imageBackOff ?? DEFAULT_IMAGE_BACKOFF,
      tracer: options.tracer,
    });
    this.seccomp = { runtimeDefault: options.seccompDefault ?? false, profileRoot: options.seccompProfileRoot ?? DEFAULT_SECCOMP_PROFILE_ROOT };
    this.startDeps = {
      runtime: options.runtime,
      logger: options.logger,
      clock: options.clock,
      onEvent: options.onEvent,
      podIP: (pod) => this.podIP(pod),
      sidecarContainers: options.sidecarContainers ?? false,
      podHostIPs: options.podHostIPs ?? false,
      seccomp: this.seccomp,
      checkOomScore: (adjust) => {
        this.checkOomScore(adjust);
      },
      puller: this.puller,
      pullCredentials: options.pullCredentials,
      envObjects: options.envObjects,
      backOff: this.backOff,
      volumes: options.volumes,
      nodeName: options.nodeName,
      capacity: options.nodeCapacity ?? (() => (machine ??= readNodeCapacity())),
      resources: {
        cpuCFSQuota: options.cpuCFSQuota ?? true,
        cpuCFSQuotaPeriodUs: options.cpuCFSQuotaPeriodNs === undefined ? DEFAULT_CFS_PERIOD_US : Math.round(options.cpuCFSQuotaPeriodNs / 1000),
        memorySwap: options.memorySwap,
      },
      cpuset: options.containerCpuset,
      devices: options.devices,
    };
  }

  async syncPod(pod: NodePod, status: RuntimePodStatus, signal?: AbortSignal): Promise<PodSyncResult> {
    const { probeResults: probes, sidecarContainers } = this.options;
    const actions = computePodActions(pod, status, { probes, sidecarContainers, inPlaceResize: inPlaceResizeOf(this.options, pod) });
    if (!changesRuntime(actions)) {
      // The usual periodic resync: nothing to kill, create or start (no sandbox config to make).
      this.logActions(pod, actions);
      return { errors: [] };
    }
    // What the runtime holds for the pod changes under this sync: a kept status is stale.
    const cache = this.options.statusCache;
    const { uid } = pod.metadata;
    cache?.invalidate(uid);
    let result: AppliedActions;
    try {
      result = await this.applyActions(pod, status, actions, signal);
    } finally {
      cache?.invalidate(uid);
    }
    const { made, ...outcome } = result;
    if (outcome.errors.length > 0) {
      // Read past the cache, which keeps nothing of the pod now: a change the PLEG sees while
      // problems are left (an image still pulling, a container that failed to start) syncs it.
      return { ...outcome, status: await readPodStatus(this.options.runtime, this.options.logger, this.now, uid, status.name, status.namespace) };
    }
    // A pod that held nothing holds exactly what this sync made: its statuses are read without
    // listing (upstream lists by label again; here that is two calls of the four a new pod's
    // status took, and during a burst every call competes with the runtime for the CPU).
    if (made === undefined || status.sandboxes.length > 0 || status.containers.length > 0) return outcome;
    const read = (): Promise<RuntimePodStatus> =>
      readStatuses(this.options.runtime, this.options.logger, this.now, { uid, name: status.name, namespace: status.namespace }, [made.sandbox], made.containerIds);
    return { ...outcome, status: await (cache?.read(uid, read) ?? read()) };
  }

  /** Carries out the actions, step by step in upstream's order (the file's header lists them). */
  private async applyActions(pod: NodePod, status: RuntimePodStatus, actions: PodActions, signal: AbortSignal | undefined): Promise<AppliedActions> {
    const run = new SyncRun(pod, status, actions, this.options.logger);
    this.logActions(pod, actions);
    // Each step in a span of its own when tracing (a child of the pod sync's span).
    const step = <T>(name: string, fn: () => Promise<T>): Promise<T> => traced(this.options.tracer, name, {}, fn);
    if (!(await step('killPodOrContainers', () => this.killPodOrContainers(run)))) return run.result();
    if (actions.containersToUpdate.length > 0) await step('updateContainerResources', () => updateContainers(this.startDeps, this.options, run));
    await step('removeInitContainers', () => this.removeInitContainers(run));
    const sandboxConfig = await step('generatePodSandboxConfig', () => this.sandboxConfig(run));
    if (sandboxConfig === undefined) return run.result();
    const slot = this.startSlots.slot();
    try {
      const sandbox = await step(actions.createSandbox ? 'createPodSandbox' : 'usePodSandbox', () => this.ensureSandbox(run, sandboxConfig, slot));
      if (sandbox === undefined) return run.result();
      const ctx = await this.startContext(run, sandboxConfig, sandbox, slot);
      await step('startEphemeralContainers', () => this.startContainers(run, ctx, actions.ephemeralContainersToStart, 'ephemeral', signal));
      await step('startInitContainers', () => this.startContainers(run, ctx, actions.initContainersToStart, 'init', signal));
      if (!actions.initDone) return run.result();
      await step('startContainers', () => this.startContainers(run, ctx, actions.containersToStart, 'regular', signal));
      return run.result();
    } finally {
      slot.release(); // when no container started (the sync's last steps are runtime calls that end quickly)
    }
  }

  /** Kills the pod when the actions say so, else the containers to kill; false: the sync ends here. */
  private async killPodOrContainers(run: SyncRun): Promise<boolean> {
    const { pod, actions } = run;
    if (actions.killPod) {
      if (actions.createSandbox && podSandboxChanged(pod, run.status).sandboxId !== '') {
        emitEvent(this.startDeps, { type: 'Normal', reason: 'SandboxChanged', message: 'Pod sandbox changed, it will be killed and re-created.', pod });
      }
      try {
        await killPod(this.startDeps, runningPodOf(run.status), { pod });
      } catch (err) {
        run.fail(err, { reason: 'KillPodSandboxError', message: messageOf(err) });
        return false;
      }
      return actions.createSandbox;
    }
    if (actions.containersToKill.length === 0) return true;
    const killed = await Promise.allSettled(actions.containersToKill.map((k) => killContainer(this.startDeps, { ...k, pod })));
    const failed = killed.flatMap((r, i) => (r.status === 'rejected' ? [{ reason: r.reason as unknown, name: actions.containersToKill[i]?.name ?? '' }] : []));
    const unreachable = failed.find((f) => isRuntimeUnreachable(f.reason));
    if (unreachable !== undefined) throw unreachable.reason;
    if (failed.length === 0) return true;
    for (const f of failed) run.errors.push({ container: f.name, reason: 'KillContainerError', message: messageOf(f.reason) });
    this.options.logger.warn('failed to kill containers', { pod: formatPod(pod), containers: failed.map((f) => f.name) });
    return false; // as upstream: nothing is started while a container to replace may still run
  }

  /** Removes init container instances: all before a new sandbox, else the older exited ones. Failures are logged (the GC retries). */
  private async removeInitContainers({ pod, status, actions }: SyncRun): Promise<void> {
    const ids = actions.purgeInitContainers ? status.containers.filter((c) => c.init).map((c) => c.id) : actions.initContainersToPrune;
    for (const id of ids) {
      try {
        await this.options.runtime.removeContainer(id);
      } catch (err) {
        if (isRuntimeUnreachable(err)) throw err;
        this.options.logger.warn('failed to remove init container', { pod: formatPod(pod), id, err: messageOf(err) });
      }
    }
  }

  /**
   * The sandbox's configuration (undefined: it cannot be made, and the sync ends); DNS warnings
   * are logged only when the sandbox is being created (the DNS applies then).
   */
  private async sandboxConfig(run: SyncRun): Promise<PodSandboxConfig | undefined> {
    const { pod, actions } = run;
    try {
      const settings = this.options.dns;
      const hostDns = readHostDns(settings.resolvConf);
      const [nodeIPs, cgroupParent] = await Promise.all([this.options.hostIPs(), this.options.cgroupParent(pod)]);
      const dns = podDnsConfig(pod, settings, hostDns, nodeIPs);
      if (actions.createSandbox) for (const warning of dns.warnings) this.dnsWarning(pod, warning);
      return makeSandboxConfig({ pod, attempt: actions.attempt, podLogsRoot: this.podLogsRoot, cgroupParent, dns: dns.config, clusterDomain: settings.clusterDomain, seccomp: this.seccomp });
    } catch (err) {
      const message = `failed to generate the sandbox config for pod ${formatPod(pod)}: ${messageOf(err)}`;
      if (actions.createSandbox && !isRuntimeUnreachable(err)) this.failedCreateSandbox(pod, message);
      run.fail(err, { reason: 'ConfigPodSandboxError', message });
      return undefined;
    }
  }

  /**
   * The sandbox the containers start in: the pod's own, or a new one made under the pod's start
   * slot, with its IPs (undefined: it could not be made, and the sync ends).
   */
  private async ensureSandbox(run: SyncRun, sandboxConfig: PodSandboxConfig, slot: PodStartSlot): Promise<SandboxToStartIn | undefined> {
    const { pod, status, actions } = run;
    if (!actions.createSandbox) return { id: actions.sandboxId, podIPs: status.ips };
    try {
      mkdirSync(sandboxConfig.logDirectory ?? this.podLogsRoot, { recursive: true, mode: 0o755 }); // synchronous: a local call on the start path
      await slot.hold();
      const id = await this.options.runtime.runPodSandbox({ config: sandboxConfig });
      const item = { id, metadata: null, state: 'SANDBOX_READY', createdAt: '0', labels: {}, annotations: {}, runtimeHandler: '' } as const;
      const made: SyncRun['made'] = { sandbox: { item }, containerIds: [] };
      run.made = made;
      let podIPs = status.ips;
      if (pod.spec?.hostNetwork !== true) {
        // On the host network the pod's IPs are the node's: no status read for them.
        const created = (await this.options.runtime.podSandboxStatus({ podSandboxId: id })).status;
        podIPs = toRuntimeSandboxStatus(item, created).ips;
        // Read once: the pod's status after the sync uses it too.
        if (created !== null) made.sandbox = { status: created };
      }
      // Verbosity 4, as upstream's "Created PodSandbox for pod": at -v=2 a pod start's lines are
      // SyncLoop ADD, its volumes and its containers' starts.
      this.options.logger.v(4, 'created pod sandbox', { pod: formatPod(pod), sandbox: id, attempt: actions.attempt, ips: podIPs });
      return { id, podIPs };
    } catch (err) {
      if (!isRuntimeUnreachable(err)) this.failedCreateSandbox(pod, messageOf(err));
      run.fail(err, { reason: 'CreatePodSandboxError', message: `failed to create pod sandbox: ${messageOf(err)}` });
      return undefined;
    }
  }

  /** Upstream's FailedCreatePodSandBox event. */
  private failedCreateSandbox(pod: NodePod, cause: string): void {
    emitEvent(this.startDeps, { type: 'Warning', reason: 'FailedCreatePodSandBox', message: `Failed to create pod sandbox: ${cause}`, pod });
  }

  /** A DNS problem of a sandbox being created, as an event; MissingClusterDNS once per pod, and logged once per start for the node. */
  private dnsWarning(pod: NodePod, warning: DnsWarning): void {
    if (warning.reason === 'MissingClusterDNS') {
      if (this.missingClusterDns.has(pod.metadata.uid)) return;
      this.missingClusterDns.add(pod.metadata.uid);
      if (!this.missingClusterDnsLogged) this.options.logger.warn(MISSING_CLUSTER_DNS);
      this.missingClusterDnsLogged = true;
    }
    emitEvent(this.startDeps, { type: 'Warning', reason: warning.reason, message: warning.message, pod });
  }

  /** What this sync's container starts share: the sandbox, the pod's IPs (the node's on the host network), and the start slot to give back once one started or an image pull begins. */
  private async startContext(run: SyncRun, sandboxConfig: PodSandboxConfig, sandbox: SandboxToStartIn, slot: PodStartSlot): Promise<StartContext> {
    const hostIPs = await this.options.hostIPs();
    const podIPs = run.pod.spec?.hostNetwork === true ? hostIPs : sandbox.podIPs;
    return { pod: run.pod, status: run.status, sandboxId: sandbox.id, sandboxConfig, podIPs, hostIPs, onRuntimeDone: slot.release, onPull: slot.release };
  }

  /**
   * Starts the containers one after the other, each on its own (one's failure does not stop the
   * next); stops as soon as the pod is being killed (`signal`): a pod of hundreds of containers is
   * not started to the end.
   */
  private async startContainers(
    run: SyncRun, ctx: StartContext, containers: readonly (Container | EphemeralContainer)[], kind: ContainerKind, signal: AbortSignal | undefined,
  ): Promise<void> {
    for (const container of containers) {
      if (signal?.aborted === true) {
        this.options.logger.v(3, 'Pod is being killed: no further container starts', { pod: formatPod(run.pod), skipped: containers.length - containers.indexOf(container) });
        return;
      }
      run.record(await startContainer(this.startDeps, ctx, container, kind));
    }
  }

  /** The actions at -v=4 (built only when that level is on: each pod's resync passes here). */
  private logActions(pod: NodePod, actions: PodActions): void {
    const logger = this.options.logger;
    if (logger.enabled(4)) logger.v(4, 'computed pod actions', { pod: formatPod(pod), actions: describe(actions) });
  }

  async killPod(running: RunningPod, options: { readonly pod?: NodePod; readonly gracePeriodSeconds?: number } = {}): Promise<void> {
    this.options.statusCache?.invalidate(running.uid);
    try {
      await killPod(this.startDeps, running, options);
    } finally {
      this.options.statusCache?.invalidate(running.uid);
    }
  }

  /** The pod's first IP (the node's on the host network), for httpGet hooks without a host. */
  private async podIP(pod: NodePod): Promise<string> {
    if (pod.spec?.hostNetwork === true) return (await this.options.hostIPs())[0] ?? '';
    const { uid, name, namespace } = pod.metadata;
    return (await this.getPodStatus(uid, name, namespace)).ips[0] ?? '';
  }

  /** Warns once when a container asks for a lower OOM score than the runtime may give it. */
  private checkOomScore(adjust: number): void {
    if (adjust >= 0 || this.oomWarned) return;
    this.oomCapable ??= (this.options.canLowerOomScore ?? hasSysResourceCapability)();
    if (this.oomCapable) return;
    this.oomWarned = true;
    this.options.logger.warn(
      'OOM score adjustments below 0 cannot be applied here (no CAP_SYS_RESOURCE; the runtime restricts them to its own score): Guaranteed and critical pods keep the runtime\'s score',
      { requested: adjust },
    );
  }

  async removePod(uid: string): Promise<void> {
    this.options.statusCache?.invalidate(uid);
    await removePod({ runtime: this.options.runtime, logger: this.options.logger, podLogsRoot: this.podLogsRoot }, uid);
    this.backOff.forgetPrefix(`${uid}_`);
    this.puller.forgetPod(uid);
    this.missingClusterDns.delete(uid);
  }

  getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
    const read = (): Promise<RuntimePodStatus> => readPodStatus(this.options.runtime, this.options.logger, this.now, uid, name, namespace);
    const absent = (): RuntimePodStatus => ({ uid, name, namespace, ips: [], sandboxes: [], containers: [], timestamp: this.now() });
    return this.options.statusCache?.read(uid, read, absent) ?? read();
  }

  listPods(): Promise<RunningPod[]> {
    return listRunningPods(this.options.runtime);
  }
}

function describe(actions: PodActions): Record<string, unknown> {
  return {
    killPod: actions.killPod,
    createSandbox: actions.createSandbox,
    attempt: actions.attempt,
    init: actions.initContainersToStart.map((c) => c.name),
    start: actions.containersToStart.map((c) => c.name),
    ephemeral: actions.ephemeralContainersToStart.map((c) => c.name),
    kill: actions.containersToKill.map((k) => k.name),
    update: actions.containersToUpdate.map((c) => c.name),
  };
}

/** The runtime manager over a CRI runtime and image service. Does nothing until called. */
export function createRuntimeManager(options: RuntimeManagerOptions): PodRuntimeManager {
  return new RuntimeManager(options);
}

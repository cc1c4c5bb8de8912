/**
 * The runtime manager (upstream: kubeGenericRuntimeManager): syncPod applies the actions
 * computed for a pod in upstream's order —
 *
 *   1. kill the pod (all containers, then the sandboxes) when a new sandbox is needed or
 *      nothing is left to run; otherwise kill the containers to restart;
 *   2. remove init container instances: all of them before a new sandbox, else the older
 *      exited ones;
 *   3. create the sandbox (its log directory first), reading its IPs; at most
 *      `maxConcurrentPodStarts` pods are between their RunPodSandbox call and the runtime's
 *      start of their first container, the others wait their turn (see semaphore.ts);
 *   4. start the init containers to start (without sidecars: the next one), and stop there
 *      while init containers are not done;
 *   5. start the containers to start, each on its own (one's failure does not stop another).
 *
 * Containers are killed with their preStop hook and Killing event (kill.ts); containers that
 * failed a liveness or startup probe (the prober's results) are killed and restarted.
 *
 * Back-offs live here (restart: per pod, container and spec hash; image pulls: per pod and
 * image) and tell the worker when to sync again.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { messageOf } from '../../api/errors.js';
import { readNodeCapacity } from '../../api/node-capacity.js';
import { BackOff, DEFAULT_CONTAINER_BACKOFF, DEFAULT_IMAGE_BACKOFF } from './backoff.js';
import { computePodActions, type PodActions } from './compute-actions.js';
import { formatPod } from './container-config.js';
import { podDnsConfig, readHostDns } from './dns.js';
import type { NodeCapacity } from './env.js';
import { isRuntimeUnreachable } from './errors.js';
import { ImagePuller } from './images.js';
import { killContainer, killPod, removePod } from './kill.js';
import type { RuntimeManagerOptions } from './options.js';
import { DEFAULT_CFS_PERIOD_US } from './resources.js';
import { DEFAULT_POD_LOGS_ROOT, makeSandboxConfig } from './sandbox-config.js';
import { DEFAULT_SECCOMP_PROFILE_ROOT, type SeccompSettings } from './seccomp.js';
import { Semaphore, defaultPodStartConcurrency } from './semaphore.js';
import { prepareContainer, startContainer, type Preparation, type StartContext, type StartDeps, type StartResult } from './start-container.js';
import { listRunningPods, readPodStatus, readStatuses, toRuntimeSandboxStatus, type KnownSandbox } from './status.js';
import type { PodRuntimeManager, PodSyncResult, RunningPod, RuntimePodStatus, SyncError } from './types.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';

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

/** A sync's outcome, and the sandbox and containers it made when it made a sandbox. */
interface AppliedActions extends PodSyncResult {
  readonly made?: { readonly sandbox: KnownSandbox; readonly containerIds: readonly string[] };
}

class RuntimeManager implements PodRuntimeManager {
  private readonly now: () => number;
  private readonly podLogsRoot: string;
  private readonly puller: ImagePuller;
  private readonly backOff: BackOff;
  private readonly startDeps: StartDeps;
  private readonly seccomp: SeccompSettings;
  /** Pods between their RunPodSandbox and their first container's start. */
  private readonly startSlots: Semaphore;
  private oomWarned = false;
  private oomCapable: boolean | undefined;

  constructor(private readonly options: RuntimeManagerOptions) {
    let machine: NodeCapacity | undefined;
    this.now = () => options.clock.now();
    this.podLogsRoot = options.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
    this.startSlots = new Semaphore(options.maxConcurrentPodStarts ?? defaultPodStartConcurrency());
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
    });
    this.seccomp = { runtimeDefault: options.seccompDefault ?? false, profileRoot: options.seccompProfileRoot ?? DEFAULT_SECCOMP_PROFILE_ROOT };
    this.startDeps = {
      runtime: options.runtime,
      logger: options.logger,
      onEvent: options.onEvent,
      podIP: (pod) => this.podIP(pod),
      sidecarContainers: options.sidecarContainers ?? false,
      seccomp: this.seccomp,
      checkOomScore: (adjust) => {
        this.checkOomScore(adjust);
      },
      puller: this.puller,
      pullCredentials: options.pullCredentials,
      backOff: this.backOff,
      volumes: options.volumes,
      nodeName: options.nodeName,
      capacity: options.nodeCapacity ?? (() => (machine ??= readNodeCapacity())),
      resources: {
        cpuCFSQuota: options.cpuCFSQuota ?? true,
        cpuCFSQuotaPeriodUs: options.cpuCFSQuotaPeriodNs === undefined ? DEFAULT_CFS_PERIOD_US : Math.round(options.cpuCFSQuotaPeriodNs / 1000),
      },
    };
  }

  async syncPod(pod: Pod, status: RuntimePodStatus): Promise<PodSyncResult> {
    const actions = computePodActions(pod, status, { probes: this.options.probeResults, sidecarContainers: this.options.sidecarContainers });
    if (!changesRuntime(actions)) {
      // The usual periodic resync: nothing to kill, create or start (no sandbox config to make).
      this.logActions(pod, actions);
      return { errors: [] };
    }
    // What the runtime holds for the pod changes under this sync: a kept status is stale.
    const cache = this.options.statusCache;
    const uid = pod.metadata?.uid ?? '';
    cache?.invalidate(uid);
    let result: AppliedActions;
    try {
      result = await this.applyActions(pod, status, actions);
    } finally {
      cache?.invalidate(uid);
    }
    const { made, ...outcome } = result;
    // A pod that held nothing holds exactly what this sync made: its statuses are read without
    // listing (upstream lists by label again; here that is two calls of the four a new pod's
    // status took, and during a burst every call competes with the runtime for the CPU).
    if (made === undefined || status.sandboxes.length > 0 || status.containers.length > 0 || outcome.errors.length > 0) return outcome;
    const read = (): Promise<RuntimePodStatus> =>
      readStatuses(this.options.runtime, this.options.logger, this.now, { uid, name: status.name, namespace: status.namespace }, [made.sandbox], made.containerIds);
    return { ...outcome, status: await (cache?.read(uid, read) ?? read()) };
  }

  private async applyActions(pod: Pod, status: RuntimePodStatus, actions: PodActions): Promise<AppliedActions> {
    const errors: SyncError[] = [];
    const retries: number[] = [];
    let made: { sandbox: KnownSandbox; containerIds: string[] } | undefined;
    const result = (): AppliedActions => ({ errors, ...(retries.length === 0 ? {} : { requeueAfterMs: Math.min(...retries) }), ...(made === undefined ? {} : { made }) });
    const fail = (err: unknown, e: SyncError): PodSyncResult => {
      if (isRuntimeUnreachable(err)) throw err;
      this.options.logger.warn('pod sync step failed', { pod: formatPod(pod), reason: e.reason, container: e.container, err: e.message });
      errors.push(e);
      return result();
    };
    this.logActions(pod, actions);
    if (actions.killPod) {
      try {
        await killPod(this.startDeps, runningPodOf(status), { pod });
      } catch (err) {
        return fail(err, { reason: 'KillPodSandboxError', message: messageOf(err) });
      }
      if (!actions.createSandbox) return result();
    } else if (actions.containersToKill.length > 0) {
      const killed = await Promise.allSettled(actions.containersToKill.map((k) => killContainer(this.startDeps, { ...k, pod })));
      const failed = killed.flatMap((r, i) => (r.status === 'rejected' ? [{ reason: r.reason as unknown, name: actions.containersToKill[i]?.name ?? '' }] : []));
      const unreachable = failed.find((f) => isRuntimeUnreachable(f.reason));
      if (unreachable !== undefined) throw unreachable.reason;
      if (failed.length > 0) {
        for (const f of failed) errors.push({ container: f.name, reason: 'KillContainerError', message: messageOf(f.reason) });
        this.options.logger.warn('failed to kill containers', { pod: formatPod(pod), containers: failed.map((f) => f.name) });
        return result(); // as upstream: nothing is started while a container to replace may still run
      }
    }
    await this.removeInitContainers(pod, status, actions);
    let sandboxConfig: PodSandboxConfig;
    try {
      sandboxConfig = await this.sandboxConfig(pod, actions.attempt, actions.createSandbox);
    } catch (err) {
      return fail(err, { reason: 'ConfigPodSandboxError', message: `failed to generate the sandbox config for pod ${formatPod(pod)}: ${messageOf(err)}` });
    }
    let sandboxId = actions.sandboxId;
    let podIPs = status.ips;
    const hostNetwork = pod.spec?.hostNetwork === true;
    // A new sandbox's first container is prepared (image, mounts, files) while the sandbox is made.
    const first = actions.createSandbox ? firstToStart(actions) : undefined;
    const early = first === undefined ? undefined : this.prepareEarly(pod, status, sandboxConfig, first.container);
    let earlyDone = early === undefined;
    void early?.then(() => {
      earlyDone = true;
    });
    // A start slot, held from the RunPodSandbox call until the runtime has started one of the
    // pod's containers; also given back once the sandbox is made if the first container is
    // still being prepared (an image pull may take minutes), and in the finally below when no
    // container started (the sync's remaining steps are runtime calls that end quickly).
    let releaseSlot: (() => void) | undefined;
    try {
      if (actions.createSandbox) {
        try {
          mkdirSync(sandboxConfig.logDirectory ?? this.podLogsRoot, { recursive: true, mode: 0o755 }); // synchronous: a local call on the start path
          releaseSlot = await this.startSlots.hold();
          const id = await this.options.runtime.runPodSandbox({ config: sandboxConfig });
          sandboxId = id;
          if (!earlyDone) releaseSlot();
          const item = { id, metadata: null, state: 'SANDBOX_READY', createdAt: '0', labels: {}, annotations: {}, runtimeHandler: '' } as const;
          made = { sandbox: { item }, containerIds: [] };
          if (!hostNetwork) {
            // On the host network the pod's IPs are the node's: no status read for them.
            const created = (await this.options.runtime.podSandboxStatus({ podSandboxId: id })).status;
            podIPs = toRuntimeSandboxStatus(item, created).ips;
            // Read once: the pod's status after the sync uses it too.
            if (created !== null) made.sandbox = { status: created };
          }
          this.options.logger.v(2, 'created pod sandbox', { pod: formatPod(pod), sandbox: sandboxId, attempt: actions.attempt, ips: podIPs });
        } catch (err) {
          await early; // settled (never rejects): its files are the pod's, removed with it
          return fail(err, { reason: 'CreatePodSandboxError', message: `failed to create pod sandbox: ${messageOf(err)}` });
        }
      }
      const hostIPs = await this.options.hostIPs();
      const ctx: StartContext = { pod, status, sandboxId, sandboxConfig, podIPs: hostNetwork ? hostIPs : podIPs, hostIPs, ...(releaseSlot === undefined ? {} : { onRuntimeDone: releaseSlot }) };
      const preparedFor = async (container: Container): Promise<Preparation | undefined> => {
        if (first?.container !== container) return undefined;
        const prepared = await early;
        if (prepared instanceof Error) throw prepared; // the runtime became unreachable
        return prepared;
      };
      const record = (r: StartResult): void => {
        if (r.error !== undefined) errors.push(r.error);
        if (r.retryAfterMs !== undefined) retries.push(r.retryAfterMs);
        if (r.id !== undefined) made?.containerIds.push(r.id);
      };
      for (const init of actions.initContainersToStart) record(await startContainer(this.startDeps, ctx, init, true, await preparedFor(init)));
      if (!actions.initDone) return result();
      for (const container of actions.containersToStart) record(await startContainer(this.startDeps, ctx, container, false, await preparedFor(container)));
      return result();
    } finally {
      releaseSlot?.();
    }
  }

  /** The actions at -v=4 (built only when that level is on: each pod's resync passes here). */
  private logActions(pod: Pod, actions: PodActions): void {
    const logger = this.options.logger;
    if (logger.enabled(4)) logger.v(4, 'computed pod actions', { pod: formatPod(pod), actions: describe(actions) });
  }

  async killPod(running: RunningPod, options: { readonly pod?: Pod; readonly gracePeriodSeconds?: number } = {}): Promise<void> {
    this.options.statusCache?.invalidate(running.uid);
    try {
      await killPod(this.startDeps, running, options);
    } finally {
      this.options.statusCache?.invalidate(running.uid);
    }
  }

  /** The pod's first IP (the node's on the host network), for httpGet hooks without a host. */
  private async podIP(pod: Pod): Promise<string> {
    if (pod.spec?.hostNetwork === true) return (await this.options.hostIPs())[0] ?? '';
    const id = { uid: pod.metadata?.uid ?? '', name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default' };
    return (await this.getPodStatus(id.uid, id.name, id.namespace)).ips[0] ?? '';
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
  }

  getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
    const read = (): Promise<RuntimePodStatus> => readPodStatus(this.options.runtime, this.options.logger, this.now, uid, name, namespace);
    const absent = (): RuntimePodStatus => ({ uid, name, namespace, ips: [], sandboxes: [], containers: [], timestamp: this.now() });
    return this.options.statusCache?.read(uid, read, absent) ?? read();
  }

  listPods(): Promise<RunningPod[]> {
    return listRunningPods(this.options.runtime);
  }

  /** prepareContainer started now; settles to the preparation or to the error that must end the sync. */
  private prepareEarly(pod: Pod, status: RuntimePodStatus, sandboxConfig: PodSandboxConfig, container: Container): Promise<Preparation | Error> {
    return prepareContainer(this.startDeps, { pod, status, sandboxConfig }, container).catch((err: unknown) => (err instanceof Error ? err : new Error(messageOf(err))));
  }

  /** The sandbox's configuration; DNS warnings are logged only when it is being created (the DNS applies then). */
  private async sandboxConfig(pod: Pod, attempt: number, creating: boolean): Promise<PodSandboxConfig> {
    const settings = this.options.dns;
    const hostDns = readHostDns(settings.resolvConf);
    const [nodeIPs, cgroupParent] = await Promise.all([this.options.hostIPs(), this.options.cgroupParent(pod)]);
    const dns = podDnsConfig(pod, settings, hostDns, nodeIPs);
    if (creating) for (const warning of dns.warnings) this.options.logger.warn(warning, { pod: formatPod(pod) });
    return makeSandboxConfig({ pod, attempt, podLogsRoot: this.podLogsRoot, cgroupParent, dns: dns.config, clusterDomain: settings.clusterDomain, seccomp: this.seccomp });
  }

  /** Removes init container instances: all before a new sandbox, else the older exited ones. Failures are logged (the GC retries). */
  private async removeInitContainers(pod: Pod, status: RuntimePodStatus, actions: PodActions): Promise<void> {
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
}

/** The container a sync that makes a new sandbox starts first: the first init container, else the first container. */
function firstToStart(actions: PodActions): { readonly container: Container } | undefined {
  const container = actions.initContainersToStart[0] ?? (actions.initDone ? actions.containersToStart[0] : undefined);
  return container === undefined ? undefined : { container };
}

/** Whether carrying out the actions changes what the runtime holds for the pod. */
function changesRuntime(a: PodActions): boolean {
  return a.killPod || a.createSandbox || a.containersToKill.length > 0 || a.initContainersToStart.length > 0 || a.containersToStart.length > 0
    || a.purgeInitContainers || a.initContainersToPrune.length > 0;
}

function describe(actions: PodActions): Record<string, unknown> {
  return {
    killPod: actions.killPod,
    createSandbox: actions.createSandbox,
    attempt: actions.attempt,
    init: actions.initContainersToStart.map((c) => c.name),
    start: actions.containersToStart.map((c) => c.name),
    kill: actions.containersToKill.map((k) => k.name),
  };
}

/** The runtime manager over a CRI runtime and image service. Does nothing until called. */
export function createRuntimeManager(options: RuntimeManagerOptions): PodRuntimeManager {
  return new RuntimeManager(options);
}

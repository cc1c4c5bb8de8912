/**
 * The runtime manager (upstream: kubeGenericRuntimeManager): syncPod applies the actions
 * computed for a pod in upstream's order —
 *
 *   1. kill the pod (all containers, then the sandboxes) when a new sandbox is needed or
 *      nothing is left to run; otherwise kill the containers to restart;
 *   2. remove init container instances: all of them before a new sandbox, else the older
 *      exited ones;
 *   3. create the sandbox (its log directory first), reading its IPs;
 *   4. start the next init container, and stop there;
 *   5. start the containers to start, each on its own (one's failure does not stop another).
 *
 * Back-offs live here (restart: per pod, container and spec hash; image pulls: per pod and
 * image) and tell the worker when to sync again.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { messageOf } from '../../api/errors.js';
import { BackOff, DEFAULT_CONTAINER_BACKOFF, DEFAULT_IMAGE_BACKOFF } from './backoff.js';
import { computePodActions, type PodActions } from './compute-actions.js';
import { formatPod } from './container-config.js';
import { podDnsConfig, readHostDns } from './dns.js';
import type { NodeCapacity } from './env.js';
import { isRuntimeUnreachable } from './errors.js';
import { ImagePuller } from './images.js';
import { killContainer, killPod, removePod, gracePeriodFor } from './kill.js';
import type { RuntimeManagerOptions } from './options.js';
import { DEFAULT_CFS_PERIOD_US } from './resources.js';
import { DEFAULT_POD_LOGS_ROOT, makeSandboxConfig } from './sandbox-config.js';
import { startContainer, type StartContext, type StartDeps } from './start-container.js';
import { listRunningPods, readPodStatus, toRuntimeSandboxStatus } from './status.js';
import type { PodRuntimeManager, PodSyncResult, RunningPod, RuntimePodStatus, SyncError } from './types.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';

function machineCapacity(): NodeCapacity {
  return { cpuMilli: os.cpus().length * 1000, memoryBytes: os.totalmem() };
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

class RuntimeManager implements PodRuntimeManager {
  private readonly now: () => number;
  private readonly podLogsRoot: string;
  private readonly puller: ImagePuller;
  private readonly backOff: BackOff;
  private readonly startDeps: StartDeps;

  constructor(private readonly options: RuntimeManagerOptions) {
    this.now = options.now ?? Date.now;
    this.podLogsRoot = options.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
    this.backOff = new BackOff(options.containerBackOff ?? DEFAULT_CONTAINER_BACKOFF, this.now);
    this.puller = new ImagePuller({
      images: options.images,
      logger: options.logger,
      now: this.now,
      serialize: options.serializeImagePulls ?? true,
      maxParallel: options.maxParallelImagePulls ?? 0,
      qps: options.registryPullQPS ?? 5,
      burst: options.registryBurst ?? 10,
      backOff: options.imageBackOff ?? DEFAULT_IMAGE_BACKOFF,
    });
    this.startDeps = {
      runtime: options.runtime,
      logger: options.logger,
      puller: this.puller,
      backOff: this.backOff,
      volumes: options.volumes,
      nodeName: options.nodeName,
      capacity: options.nodeCapacity ?? machineCapacity,
      resources: {
        cpuCFSQuota: options.cpuCFSQuota ?? true,
        cpuCFSQuotaPeriodUs: options.cpuCFSQuotaPeriodNs === undefined ? DEFAULT_CFS_PERIOD_US : Math.round(options.cpuCFSQuotaPeriodNs / 1000),
      },
    };
  }

  async syncPod(pod: Pod, status: RuntimePodStatus): Promise<PodSyncResult> {
    const actions = computePodActions(pod, status);
    const errors: SyncError[] = [];
    const retries: number[] = [];
    const result = (): PodSyncResult => (retries.length === 0 ? { errors } : { errors, requeueAfterMs: Math.min(...retries) });
    const fail = (err: unknown, e: SyncError): PodSyncResult => {
      if (isRuntimeUnreachable(err)) throw err;
      this.options.logger.warn('pod sync step failed', { pod: formatPod(pod), reason: e.reason, container: e.container, err: e.message });
      errors.push(e);
      return result();
    };
    this.options.logger.v(4, 'computed pod actions', { pod: formatPod(pod), actions: describe(actions) });
    if (actions.killPod) {
      try {
        await killPod({ runtime: this.options.runtime, logger: this.options.logger }, runningPodOf(status), { pod });
      } catch (err) {
        return fail(err, { reason: 'KillPodSandboxError', message: messageOf(err) });
      }
      if (!actions.createSandbox) return result();
    } else if (actions.containersToKill.length > 0) {
      const grace = gracePeriodFor(pod, undefined, undefined);
      const killed = await Promise.allSettled(actions.containersToKill.map((k) => killContainer(this.startDeps, k.id, k.name, grace, k.message)));
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
    if (actions.createSandbox) {
      try {
        await mkdir(sandboxConfig.logDirectory ?? this.podLogsRoot, { recursive: true, mode: 0o755 });
        sandboxId = await this.options.runtime.runPodSandbox({ config: sandboxConfig });
        const created = (await this.options.runtime.podSandboxStatus({ podSandboxId: sandboxId })).status;
        podIPs = toRuntimeSandboxStatus({ id: sandboxId, metadata: null, state: 'SANDBOX_READY', createdAt: '0', labels: {}, annotations: {}, runtimeHandler: '' }, created).ips;
        this.options.logger.v(2, 'created pod sandbox', { pod: formatPod(pod), sandbox: sandboxId, attempt: actions.attempt, ips: podIPs });
      } catch (err) {
        return fail(err, { reason: 'CreatePodSandboxError', message: `failed to create pod sandbox: ${messageOf(err)}` });
      }
    }
    const hostIPs = await this.options.hostIPs();
    const ctx: StartContext = { pod, status, sandboxId, sandboxConfig, podIPs: pod.spec?.hostNetwork === true ? hostIPs : podIPs, hostIPs };
    const init = actions.nextInitContainer;
    if (init !== undefined) {
      const r = await startContainer(this.startDeps, ctx, init, true);
      if (r.error !== undefined) errors.push(r.error);
      if (r.retryAfterMs !== undefined) retries.push(r.retryAfterMs);
      return result();
    }
    for (const container of actions.containersToStart) {
      const r = await startContainer(this.startDeps, ctx, container, false);
      if (r.error !== undefined) errors.push(r.error);
      if (r.retryAfterMs !== undefined) retries.push(r.retryAfterMs);
    }
    return result();
  }

  killPod(running: RunningPod, options: { readonly pod?: Pod; readonly gracePeriodSeconds?: number } = {}): Promise<void> {
    return killPod({ runtime: this.options.runtime, logger: this.options.logger }, running, options);
  }

  async removePod(uid: string): Promise<void> {
    await removePod({ runtime: this.options.runtime, logger: this.options.logger, podLogsRoot: this.podLogsRoot }, uid);
    this.backOff.forgetPrefix(`${uid}_`);
    this.puller.forgetPod(uid);
  }

  getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
    return readPodStatus(this.options.runtime, this.options.logger, this.now, uid, name, namespace);
  }

  listPods(): Promise<RunningPod[]> {
    return listRunningPods(this.options.runtime);
  }

  /** The sandbox's configuration; DNS warnings are logged only when it is being created (the DNS applies then). */
  private async sandboxConfig(pod: Pod, attempt: number, creating: boolean): Promise<PodSandboxConfig> {
    const settings = this.options.dns;
    const [hostDns, nodeIPs, cgroupParent] = await Promise.all([readHostDns(settings.resolvConf), this.options.hostIPs(), this.options.cgroupParent(pod)]);
    const dns = podDnsConfig(pod, settings, hostDns, nodeIPs);
    if (creating) for (const warning of dns.warnings) this.options.logger.warn(warning, { pod: formatPod(pod) });
    return makeSandboxConfig({ pod, attempt, podLogsRoot: this.podLogsRoot, cgroupParent, dns: dns.config, clusterDomain: settings.clusterDomain });
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

function describe(actions: PodActions): Record<string, unknown> {
  return {
    killPod: actions.killPod,
    createSandbox: actions.createSandbox,
    attempt: actions.attempt,
    nextInit: actions.nextInitContainer?.name,
    start: actions.containersToStart.map((c) => c.name),
    kill: actions.containersToKill.map((k) => k.name),
  };
}

/** The runtime manager over a CRI runtime and image service. Does nothing until called. */
export function createRuntimeManager(options: RuntimeManagerOptions): PodRuntimeManager {
  return new RuntimeManager(options);
}

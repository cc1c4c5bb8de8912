/**
 * In-place resize of running containers (the InPlacePodVerticalScaling gate; upstream's
 * doPodResizeAction for the containers): each container to update gets its spec's resources
 * through UpdateContainerResources, and the resize state (src/agent/resize) records what it now
 * has. The pod cgroup is podsync's: raised before, lowered after.
 */
import { messageOf } from '../../api/errors.js';
import { isStaticPod, type NodePod } from '../../api/pod/index.js';
import { formatPod } from './container-config.js';
import { isRuntimeUnreachable } from './errors.js';
import { emitEvent } from './lifecycle.js';
import type { ComputeOptions } from './compute-actions.js';
import type { RuntimeManagerOptions } from './options.js';
import { enforcedValues } from '../resize/index.js';
import { containerResources } from './resources.js';
import type { StartDeps } from './start-container.js';
import type { SyncRun } from './sync-run.js';

/**
 * The memory a container uses now (bytes), when the runtime reports it: a memory limit is not
 * lowered below it (upstream aborts such a resize and tries again at the next sync, rather than
 * have the kernel kill the container).
 */
async function memoryUsage(runtime: RuntimeManagerOptions['runtime'], id: string): Promise<number | undefined> {
  if (runtime.containerStats === undefined) return undefined;
  const memory = (await runtime.containerStats(id)).memory;
  const usage = memory?.usageBytes?.value ?? memory?.workingSetBytes?.value;
  return usage === undefined ? undefined : Number(usage);
}

/**
 * Gives the running containers of `run.actions.containersToUpdate` their spec's resources. A
 * failure is a FailedUpdateResources event; the next sync tries again (the instance keeps what it
 * had), as it does for a memory limit below what the container uses now. An unreachable runtime
 * rejects.
 */
export async function updateContainers(
  deps: Pick<StartDeps, 'capacity' | 'resources' | 'logger' | 'onEvent'>, options: Pick<RuntimeManagerOptions, 'runtime' | 'logger' | 'inPlaceResize'>,
  { pod, status, actions }: Pick<SyncRun, 'pod' | 'status' | 'actions'>,
): Promise<void> {
  const memoryCapacityBytes = deps.capacity().memoryBytes;
  for (const c of actions.containersToUpdate) {
    const id = status.containers.find((s) => s.name === c.name && s.state === 'running')?.id;
    if (id === undefined) continue;
    try {
      const linux = containerResources(pod, c, { ...deps.resources, memoryCapacityBytes });
      const current = options.inPlaceResize?.current(pod.metadata.uid, id);
      const limit = linux.memoryLimitInBytes ?? 0;
      const had = enforcedValues(current).memoryLimit; // 0: no limit (or not known)
      if (limit > 0 && (had === 0 || limit < had)) {
        const used = await memoryUsage(options.runtime, id);
        if (used !== undefined && used >= limit) {
          options.logger.warn('Not lowering a container\'s memory limit below what it uses; trying again at the next sync', { pod: formatPod(pod), container: c.name, limit, used });
          continue;
        }
      }
      await options.runtime.updateContainerResources({ containerId: id, linux });
      options.inPlaceResize?.applied(pod.metadata.uid, id, c.resources ?? {});
      options.logger.v(2, 'container resources updated in place', { pod: formatPod(pod), container: c.name, resources: c.resources });
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      emitEvent(deps, { type: 'Warning', reason: 'FailedUpdateResources', message: `Failed to update the resources of container ${c.name}: ${messageOf(err)}`, pod });
    }
  }
}

/** The resize view computePodActions takes for one pod (undefined: the gate is off, or a static pod, which upstream never resizes in place). */
export function inPlaceResizeOf(options: Pick<RuntimeManagerOptions, 'inPlaceResize'>, pod: NodePod): ComputeOptions['inPlaceResize'] {
  const resize = options.inPlaceResize;
  const { uid } = pod.metadata;
  return resize === undefined || isStaticPod(pod) ? undefined : { current: (id) => resize.current(uid, id) };
}

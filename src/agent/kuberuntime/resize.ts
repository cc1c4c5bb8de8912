/**
 * In-place resize of running containers (the InPlacePodVerticalScaling gate; upstream's
 * doPodResizeAction for the containers): each container to update gets its spec's resources
 * through UpdateContainerResources, and the resize state (src/agent/resize) records what it now
 * has. The pod cgroup is podsync's: raised before, lowered after.
 */
import { messageOf } from '../../api/errors.js';
import { formatPod } from './container-config.js';
import { isRuntimeUnreachable } from './errors.js';
import { emitEvent } from './lifecycle.js';
import type { ComputeOptions } from './compute-actions.js';
import type { RuntimeManagerOptions } from './options.js';
import { containerResources } from './resources.js';
import type { StartDeps } from './start-container.js';
import type { SyncRun } from './sync-run.js';

/**
 * Gives the running containers of `run.actions.containersToUpdate` their spec's resources. A
 * failure is a FailedUpdateResources event; the next sync tries again (the instance keeps what it
 * had). An unreachable runtime rejects.
 */
export async function updateContainers(deps: StartDeps, options: Pick<RuntimeManagerOptions, 'runtime' | 'logger' | 'inPlaceResize'>, { pod, status, actions }: SyncRun): Promise<void> {
  const memoryCapacityBytes = deps.capacity().memoryBytes;
  for (const c of actions.containersToUpdate) {
    const id = status.containers.find((s) => s.name === c.name && s.state === 'running')?.id;
    if (id === undefined) continue;
    try {
      await options.runtime.updateContainerResources({ containerId: id, linux: containerResources(pod, c, { ...deps.resources, memoryCapacityBytes }) });
      options.inPlaceResize?.applied(pod.metadata.uid, id, c.resources ?? {});
      options.logger.v(2, 'container resources updated in place', { pod: formatPod(pod), container: c.name, resources: c.resources });
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      emitEvent(deps, { type: 'Warning', reason: 'FailedUpdateResources', message: `Failed to update the resources of container ${c.name}: ${messageOf(err)}`, pod });
    }
  }
}

/** The resize view computePodActions takes for one pod (undefined: the gate is off). */
export function inPlaceResizeOf(options: Pick<RuntimeManagerOptions, 'inPlaceResize'>, uid: string): ComputeOptions['inPlaceResize'] {
  const resize = options.inPlaceResize;
  return resize === undefined ? undefined : { current: (id) => resize.current(uid, id) };
}

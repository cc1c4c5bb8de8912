/**
 * Init containers with the SidecarContainers gate (upstream: computeInitContainerActions): an
 * init container with `restartPolicy: Always` is a sidecar. Walking the init containers in
 * order:
 *
 *   | init container                          | action                                              |
 *   |-----------------------------------------|-----------------------------------------------------|
 *   | sidecar, no instance                    | start it; wait (unless the pod was initialized)      |
 *   | sidecar, running, probe failed          | kill it and start it again                          |
 *   | sidecar, running, startup probe pending | wait (unless the pod was initialized)                |
 *   | sidecar, running                        | go on to the next one                               |
 *   | sidecar, exited (any code), unknown     | start it again (whatever the pod's restart policy;   |
 *   |                                         | the restart back-off applies), go on                |
 *   | regular, pod already initialized        | nothing (it ran)                                    |
 *   | regular, no instance                    | start it; wait                                      |
 *   | regular, running or created             | wait                                                |
 *   | regular, exited 0                       | go on                                               |
 *   | regular, failed                         | restartPolicy Never: the pod failed; else start it   |
 *   |                                         | again; wait                                         |
 *
 * The pod counts as initialized once any regular container has an instance: regular init
 * containers never run again in that sandbox, sidecars keep being restarted. Pure.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerProbeResults } from '../prober/index.js';
import type { ContainerToKill } from './compute-actions.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from './types.js';

export interface InitActions {
  /** Regular init containers all succeeded and sidecars started: the containers may run. */
  readonly done: boolean;
  /** Init containers to start in this pass, in order. */
  readonly start: readonly Container[];
  readonly kill: readonly ContainerToKill[];
  /** A regular init container failed under restartPolicy Never. */
  readonly failed: boolean;
}

export function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

function newestInit(status: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  return status.containers.find((c) => c.name === name && c.init);
}

export function sidecarInitActions(pod: Pod, status: RuntimePodStatus, probes: ContainerProbeResults | undefined): InitActions {
  const initialized = (pod.spec?.containers ?? []).some((c) => status.containers.some((s) => s.name === c.name && !s.init));
  const start: Container[] = [];
  const kill: ContainerToKill[] = [];
  const wait = (): InitActions => ({ done: false, start, kill, failed: false });
  for (const c of pod.spec?.initContainers ?? []) {
    const s = newestInit(status, c.name);
    if (isSidecar(c)) {
      if (s === undefined) {
        start.push(c);
        if (!initialized) return wait();
        continue;
      }
      if (s.state === 'running') {
        const failed = probes?.failedProbe(s.id);
        if (failed !== undefined) {
          kill.push({ id: s.id, name: c.name, spec: c, probe: failed.probe, message: `Init container ${c.name} failed ${failed.probe} probe, will be restarted` });
          start.push(c);
          continue;
        }
        if (!initialized && probes !== undefined && !probes.started(s.id)) return wait();
        continue;
      }
      if (s.state === 'unknown') kill.push({ id: s.id, name: c.name, spec: c, message: 'Init container is in unknown state, try killing it before restart' });
      if (s.state !== 'created') start.push(c);
      continue;
    }
    if (initialized) continue;
    if (s === undefined) {
      start.push(c);
      return wait();
    }
    if (s.state === 'running' || s.state === 'created') return wait();
    if (s.state === 'exited' && s.exitCode === 0) continue;
    if (pod.spec?.restartPolicy === 'Never') return { done: false, start: [], kill: [], failed: true };
    if (s.state === 'unknown') kill.push({ id: s.id, name: c.name, spec: c, message: 'Init container is in unknown state, try killing it before restart' });
    start.push(c);
    return wait();
  }
  return { done: true, start, kill, failed: false };
}

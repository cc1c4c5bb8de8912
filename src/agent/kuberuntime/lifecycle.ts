/**
 * Lifecycle hooks (upstream: pkg/kubelet/lifecycle handlers and the hook parts of
 * kuberuntime_container.go): postStart right after StartContainer, preStop before StopContainer.
 *
 *   | handler | how it runs                                          | failure message (upstream's)                   |
 *   |---------|------------------------------------------------------|------------------------------------------------|
 *   | exec    | CRI ExecSync in the container; non-zero exit fails   | Exec lifecycle hook ([cmd]) for Container ...  |
 *   | httpGet | GET, host defaulting to the pod IP; only a failed    | HTTP lifecycle hook (path) for Container ...   |
 *   |         | request fails (the status code is not checked)       |                                                |
 *   | sleep   | waits `seconds` (cut short by the preStop deadline)  | -                                              |
 *   | other   | not run (tcpSocket is kept for compatibility only)   | Cannot run handler: invalid handler            |
 *
 * A failed postStart kills the container (FailedPostStartHook) and the sync reports
 * PostStartHookError; a failed preStop is an event only, and the stop goes on. The time a
 * preStop took is taken from the grace period StopContainer gets.
 */
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1.js';
import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { httpRequest, httpTarget, PROBE_AGENT_VERSION, type PodEvent } from '../prober/index.js';
import type { ExecSyncRequest, ExecSyncResponse } from '../runtime/cri/index.js';
import { formatPod } from './container-config.js';
import type { NodePod } from '../../api/pod/index.js';
import { quoteValue } from '../../api/quote.js';

/** An HTTP hook without a deadline of its own (postStart) gives up after this long. */
export const HOOK_HTTP_TIMEOUT_MS = 10 * 60_000;

export interface HookDeps {
  readonly runtime: { execSync(request: ExecSyncRequest): Promise<ExecSyncResponse> };
  readonly logger: Logger;
  /** The sleep hook's wait. */
  readonly clock: Clock;
  readonly onEvent?: ((e: PodEvent) => void) | undefined;
}

export interface HookRun {
  readonly pod: NodePod;
  readonly container: Container;
  readonly containerId: string;
  readonly handler: LifecycleHandler;
  /** The pod's IP for an httpGet without a host (resolved only when needed). */
  readonly podIP: () => Promise<string>;
  /** Stops a sleep and bounds an HTTP request (preStop: the grace period). */
  readonly signal?: AbortSignal;
}

/** Records an event: logged now, handed to the hook the lead connects to the recorder later. */
export function emitEvent(deps: { readonly logger: Logger; readonly onEvent?: ((e: PodEvent) => void) | undefined }, event: PodEvent): void {
  const fields = { type: event.type, reason: event.reason, pod: formatPod(event.pod), container: event.container, message: event.message };
  // Routine events (Pulled, Created, Started) at verbosity 3, where upstream's kubelet logs every
  // event it records (its event broadcaster's structured logging): three lines per pod start that
  // -v=2 does not print. Warnings and kills are always logged.
  if (event.type === 'Warning' || event.reason === 'Killing') deps.logger.info('Event', fields);
  else deps.logger.v(3, 'Event', fields);
  deps.onEvent?.(event);
}

/** Runs one handler; resolves to undefined on success or to the failure message. Never rejects. */
export async function runHandler(deps: HookDeps, run: HookRun): Promise<string | undefined> {
  const { handler, container, pod } = run;
  const where = `for Container ${quoteValue(container.name)} in Pod ${quoteValue(formatPod(pod))}`;
  if (handler.exec !== undefined) {
    const cmd = handler.exec.command ?? [];
    let output = '';
    let error: string | undefined;
    try {
      const res = await deps.runtime.execSync({ containerId: run.containerId, cmd, timeout: 0 });
      output = Buffer.concat([res.stdout, res.stderr]).toString('utf8');
      if (res.exitCode !== 0) error = `command '${cmd.join(' ')}' exited with ${res.exitCode}: ${res.stderr.toString('utf8')}`;
    } catch (err) {
      error = messageOf(err);
    }
    return error === undefined ? undefined : `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} failed - error: ${error}, message: ${quoteValue(output)}`;
  }
  if (handler.httpGet !== undefined) {
    try {
      const host = handler.httpGet.host !== undefined && handler.httpGet.host !== '' ? handler.httpGet.host : await run.podIP();
      const target = httpTarget(handler.httpGet, container, host, `orch-lifecycle/${PROBE_AGENT_VERSION}`);
      await httpRequest(target, HOOK_HTTP_TIMEOUT_MS, run.signal);
      return undefined;
    } catch (err) {
      return `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) ${where} failed - error: ${messageOf(err)}`;
    }
  }
  if (handler.sleep !== undefined) {
    await sleepKeepingAlive(deps.clock, Math.max(0, handler.sleep.seconds) * 1000, run.signal);
    if (run.signal?.aborted === true) deps.logger.v(3, 'sleep hook cut short', { container: container.name, pod: formatPod(pod) });
    return undefined;
  }
  return `Cannot run handler: invalid handler: ${quoteValue(handler)}`;
}

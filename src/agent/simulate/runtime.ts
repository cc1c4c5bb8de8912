/**
 * The container runtime of a simulated node: the in-memory runtime (memory-runtime.ts) with
 * start delays, any image pullable, no record of calls, and per-pod scripts read from the pod's
 * annotations (which the agent passes to the sandbox), as kwok's stages do:
 *
 * - `sim.orch.io/exit-after: 30s`: each container exits that long after it started;
 * - `sim.orch.io/exit-code: "1"`: with the code (default 0: Completed);
 * - `sim.orch.io/exec-exit-code: "1"`: exec probes and hooks exit with that code (failing them).
 */
import type { Clock } from '../../api/clock.js';
import { parseDuration } from '../../api/duration.js';
import { MemoryRuntime, type ExecSyncRequest, type ExecSyncResponse, type RunPodSandboxRequest } from '../runtime/cri/index.js';

export const EXIT_AFTER_ANNOTATION = 'sim.orch.io/exit-after';
export const EXIT_CODE_ANNOTATION = 'sim.orch.io/exit-code';
export const EXEC_EXIT_CODE_ANNOTATION = 'sim.orch.io/exec-exit-code';

export interface SimulatedRuntimeOptions {
  readonly clock: Clock;
  /** How long RunPodSandbox takes (ms). */
  readonly sandboxDelayMs?: number;
  /** How long StartContainer takes (ms). */
  readonly startDelayMs?: number;
}

function exitCodeOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isInteger(n) && n >= 0 && n < 256 ? n : undefined;
}

export class SimulatedRuntime extends MemoryRuntime {
  private readonly clock: Clock;
  private readonly sandboxDelayMs: number;
  private readonly startDelayMs: number;

  constructor(options: SimulatedRuntimeOptions) {
    super(() => options.clock.now(), { recordCalls: false });
    this.clock = options.clock;
    this.sandboxDelayMs = options.sandboxDelayMs ?? 0;
    this.startDelayMs = options.startDelayMs ?? 0;
    this.pullAnything = true;
  }

  override async runPodSandbox(request: RunPodSandboxRequest): Promise<string> {
    if (this.sandboxDelayMs > 0) await this.clock.sleep(this.sandboxDelayMs);
    return super.runPodSandbox(request);
  }

  override async startContainer(id: string): Promise<void> {
    if (this.startDelayMs > 0) await this.clock.sleep(this.startDelayMs);
    await super.startContainer(id);
    const annotations = this.annotationsOf(id);
    const after = annotations[EXIT_AFTER_ANNOTATION];
    if (after === undefined) return;
    let ms: number;
    try {
      ms = parseDuration(after) / 1e6;
    } catch {
      return;
    }
    const code = exitCodeOf(annotations[EXIT_CODE_ANNOTATION]) ?? 0;
    this.clock.setTimer(ms, () => {
      if (this.containers.get(id)?.state === 'CONTAINER_RUNNING') this.exit(id, code);
    });
  }

  override async execSync(request: ExecSyncRequest): Promise<ExecSyncResponse> {
    const code = exitCodeOf(this.annotationsOf(request.containerId)[EXEC_EXIT_CODE_ANNOTATION]);
    const response = await super.execSync(request);
    return code === undefined ? response : { ...response, exitCode: code };
  }

  private annotationsOf(containerId: string): Record<string, string> {
    const c = this.containers.get(containerId);
    return c?.sandboxConfig.annotations ?? {};
  }
}

/**
 * Helpers of the CRI behaviour suite (behaviour.ts): what a runtime under test must offer (the
 * harness), one test case's sandboxes and containers, and error assertions. Test code only.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isOrchError } from '../../../api/errors.js';
import type { ContainerService, ImageService, SandboxService, StreamingService } from './services.js';
import type { StringMap } from './types-common.js';
import type { ContainerConfig, ExecSyncResponse } from './types-container.js';
import type { PodSandboxConfig } from './types-pod.js';

/** The CRI calls the suite makes: those the agent relies on. */
export type CriUnderTest = SandboxService &
  ContainerService &
  Pick<StreamingService, 'execSync'> &
  Pick<ImageService, 'imageStatus' | 'pullImage' | 'listImages' | 'removeImage'>;

export interface SandboxRequest {
  readonly name: string;
  /** NODE: the host's network (no pod IP); POD: a network of its own with an IP. */
  readonly network: 'POD' | 'NODE';
  readonly labels: StringMap;
  readonly annotations: StringMap;
}

/** One runtime under test, for one test case. */
export interface CriHarness {
  readonly runtime: CriUnderTest;
  /**
   * A config for a new sandbox: the request's name, labels and annotations as given, a fresh
   * UID in a namespace of the harness, attempt 0, and what the runtime needs besides (log
   * directory, cgroup parent). Its containers get their own PID namespace.
   */
  sandboxConfig(request: SandboxRequest): PodSandboxConfig;
  /** A reference to an image that is present, with `sh` (busybox). */
  readonly image: string;
  /** A reference the runtime can pull (it may be `image`). */
  readonly pullable: string;
  /** A reference that is neither present nor pullable. */
  readonly absent: string;
  /** A command of `image` that runs until `exit` ends it and ignores SIGTERM. */
  readonly command: readonly string[];
  /**
   * Makes the running container `containerId` (started with `command`) exit with `code`;
   * resolves once the runtime reports it exited.
   */
  exit(containerId: string, code: number): Promise<void>;
  /** Removes what the case left behind. */
  cleanup(): Promise<void>;
}

/** Makes a harness for one test case. */
export type CriFactory = () => Promise<CriHarness>;

/** Commands the suite runs with ExecSync and what they produce (a fake is told these). */
export const EXEC_CASES: readonly { readonly cmd: readonly string[]; readonly result: { readonly exitCode: number; readonly stdout: string; readonly stderr: string } }[] = [
  { cmd: ['sh', '-c', 'echo out; echo err >&2; exit 3'], result: { exitCode: 3, stdout: 'out\n', stderr: 'err\n' } },
  { cmd: ['echo', 'hello'], result: { exitCode: 0, stdout: 'hello\n', stderr: '' } },
];

/** The label every sandbox and container of one case carries (lists filter on it). */
export const CASE_LABEL = 'cri-behaviour/case';

/** One test case: its harness and the sandboxes and containers it makes. */
export class CriCase {
  readonly cri: CriUnderTest;
  /** `CASE_LABEL`: a value of this case only. */
  readonly label: StringMap = { [CASE_LABEL]: randomUUID() };

  constructor(readonly harness: CriHarness) {
    this.cri = harness.runtime;
  }

  sandboxConfig(name: string, network: 'POD' | 'NODE' = 'NODE', labels: StringMap = {}): PodSandboxConfig {
    return this.harness.sandboxConfig({ name, network, labels: { ...this.label, pod: name, ...labels }, annotations: { 'cri-behaviour/pod': name } });
  }

  async sandbox(name: string, network: 'POD' | 'NODE' = 'NODE', labels: StringMap = {}): Promise<{ readonly id: string; readonly config: PodSandboxConfig }> {
    const config = this.sandboxConfig(name, network, labels);
    return { id: await this.cri.runPodSandbox({ config }), config };
  }

  /** A container of `image` running `command`, in the namespaces of its sandbox (as the agent makes them). */
  containerConfig(sandboxConfig: PodSandboxConfig, name: string, labels: StringMap = {}): ContainerConfig {
    const namespaceOptions = sandboxConfig.linux?.securityContext?.namespaceOptions;
    return {
      metadata: { name, attempt: 0 },
      image: { image: this.harness.image },
      command: this.harness.command,
      labels: { ...this.label, container: name, ...labels },
      annotations: { 'cri-behaviour/container': name },
      logPath: `${name}/0.log`,
      linux: namespaceOptions === undefined ? {} : { securityContext: { namespaceOptions } },
    };
  }

  /** A created container (not started). */
  container(sandbox: { readonly id: string; readonly config: PodSandboxConfig }, name: string, labels: StringMap = {}): Promise<string> {
    return this.cri.createContainer({ podSandboxId: sandbox.id, sandboxConfig: sandbox.config, config: this.containerConfig(sandbox.config, name, labels) });
  }

  /** A started container. */
  async running(sandbox: { readonly id: string; readonly config: PodSandboxConfig }, name: string, labels: StringMap = {}): Promise<string> {
    const id = await this.container(sandbox, name, labels);
    await this.cri.startContainer(id);
    return id;
  }

  async containerStatus(id: string): Promise<NonNullable<Awaited<ReturnType<CriUnderTest['containerStatus']>>['status']>> {
    const { status } = await this.cri.containerStatus({ containerId: id });
    assert.ok(status, `container ${id} has a status`);
    return status;
  }

  async sandboxStatus(id: string): Promise<NonNullable<Awaited<ReturnType<CriUnderTest['podSandboxStatus']>>['status']>> {
    const { status } = await this.cri.podSandboxStatus({ podSandboxId: id });
    assert.ok(status, `sandbox ${id} has a status`);
    return status;
  }
}

/** Runs `body` with a fresh harness, always cleaning up. */
export async function withCase(make: CriFactory, body: (c: CriCase) => Promise<void>): Promise<void> {
  const harness = await make();
  try {
    await body(new CriCase(harness));
  } finally {
    await harness.cleanup();
  }
}

/** Asserts that `promise` rejects with CRI_NOT_FOUND (category not-found), as the client maps gRPC NotFound. */
export async function rejectsNotFound(promise: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isOrchError(err), `${what}: expected an OrchError, got ${String(err)}`);
    assert.deepEqual([err.category, err.code], ['not-found', 'CRI_NOT_FOUND'], `${what}: ${err.message}`);
    return true;
  }, what);
}

/** Asserts that `promise` rejects with an OrchError that is not a not-found. */
export async function rejectsOther(promise: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isOrchError(err), `${what}: expected an OrchError, got ${String(err)}`);
    assert.notEqual(err.category, 'not-found', `${what}: ${err.message}`);
    return true;
  }, what);
}

export function text(response: ExecSyncResponse): { exitCode: number; stdout: string; stderr: string } {
  return { exitCode: response.exitCode, stdout: response.stdout.toString(), stderr: response.stderr.toString() };
}

export function ids(objects: readonly { readonly id: string }[]): string[] {
  return objects.map((o) => o.id).sort();
}

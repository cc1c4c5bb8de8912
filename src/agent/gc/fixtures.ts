/**
 * Test fixtures of the gc module: a FakeRuntime holding pods of the agent (sandboxes and
 * containers with its labels, logs in a temporary pod logs directory, created at the times the
 * test gives), and the pod states GC asks about. Test code only.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, podLogsDirectory } from '../kuberuntime/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import type { PodStates } from './container-plan.js';

export const IMAGE = 'registry.test/busybox:1';

/** A FakeRuntime whose timestamps come from `now` (set it before each object to date it). */
export class GcNode {
  now = Date.UTC(2024, 0, 1);
  readonly runtime = new FakeRuntime(() => this.now);
  /** Pods no source wants any more. */
  readonly gone = new Set<string>();
  ready = true;
  readonly pods: PodStates = { sourcesReady: () => this.ready, isRemovable: (uid) => this.gone.has(uid) };

  constructor(readonly logsDir: string) {
    this.runtime.images.set(IMAGE, 'sha256:busybox');
  }

  static async create(): Promise<GcNode> {
    return new GcNode(await mkdtemp(path.join(tmpdir(), 'gc-logs-')));
  }

  /** A ready sandbox of pod `uid` (named `uid` in namespace `ns`), its log directory made. */
  async sandbox(uid: string, labelled = true): Promise<string> {
    const id = { uid, name: uid, namespace: 'ns' };
    const labels = labelled ? { [POD_UID_LABEL]: uid, [POD_NAME_LABEL]: uid, [POD_NAMESPACE_LABEL]: 'ns' } : {};
    const logDirectory = podLogsDirectory(this.logsDir, id);
    await mkdir(logDirectory, { recursive: true });
    return this.runtime.runPodSandbox({ config: { metadata: { ...id, attempt: 0 }, logDirectory, labels } });
  }

  /** A container `name` (attempt `attempt`) in `sandbox`, started, exited unless `running`; its log file written. */
  async container(sandbox: string, name: string, attempt: number, o: { running?: boolean; image?: string } = {}): Promise<string> {
    const config = this.runtime.sandboxes.get(sandbox)?.config;
    if (config === undefined) throw new Error(`no sandbox ${sandbox}`);
    const labels = { ...config.labels, ...(config.labels?.[POD_UID_LABEL] === undefined ? {} : { [CONTAINER_NAME_LABEL]: name }) };
    const logPath = `${name}/${attempt}.log`;
    const id = await this.runtime.createContainer({
      podSandboxId: sandbox, sandboxConfig: config,
      config: { metadata: { name, attempt }, image: { image: o.image ?? IMAGE }, logPath, labels },
    });
    await this.runtime.startContainer(id);
    if (o.running !== true) this.runtime.exit(id, 1);
    const file = path.join(config.logDirectory ?? '', logPath);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `log of ${name} ${attempt}\n`);
    await writeFile(`${file}.20240101-000000.gz`, '');
    return id;
  }

  /** The IDs of the containers present. */
  containerIds(): string[] {
    return [...this.runtime.containers.keys()];
  }
}

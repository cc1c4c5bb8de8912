/**
 * POST /checkpoint/{namespace}/{pod}/{container} (the ContainerCheckpoint gate), as upstream's
 * agent answers it: 404 `pod does not exist` for a pod the agent does not run, 404 `container X
 * does not exist` for a name not in the pod's spec; otherwise the runtime writes a checkpoint of
 * the running container to `<rootDir>/checkpoints/checkpoint-<pod>_<namespace>-<container>-<time>.tar`
 * and the answer is `{"items":[<that path>]}`. A container that is not running, or a runtime that
 * cannot checkpoint (containerd 1.6 answers Unimplemented), is a 500 carrying the runtime's error.
 * The optional `timeout` query parameter (seconds) is passed to the runtime.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from '../kuberuntime/index.js';
import { findPod, type PodsView, type ServerCri } from './host.js';
import { HttpError, sendJson } from './http.js';
import type { Route } from './router.js';

export interface CheckpointDeps {
  readonly pods: PodsView;
  readonly cri: ServerCri;
  readonly rootDir: string;
  readonly clock: Pick<Clock, 'now'>;
}

/** upstream's RFC 3339 time of the archive name (seconds, UTC). */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function parseTimeout(raw: string | null): number | undefined {
  if (raw === null || raw === '') return undefined;
  if (!/^[+-]?\d+$/.test(raw)) throw new HttpError(500, 'cannot parse value of timeout parameter');
  return Number(raw);
}

async function checkpoint(d: CheckpointDeps, namespace: string, podName: string, name: string, timeout: number | undefined): Promise<string> {
  const pod = findPod(d.pods, namespace, podName);
  if (pod === undefined) throw new HttpError(404, 'pod does not exist');
  if (!(pod.spec?.containers ?? []).some((c) => c.name === name)) throw new HttpError(404, `container ${name} does not exist`);
  const failed = (why: string): HttpError => new HttpError(500, `checkpointing of ${namespace}/${podName}/${name} failed (${why})`);
  const dir = path.join(d.rootDir, 'checkpoints');
  const location = path.join(dir, `checkpoint-${podName}_${namespace}-${name}-${rfc3339(d.clock.now())}.tar`);
  try {
    const running = await d.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [POD_UID_LABEL]: pod.metadata.uid, [CONTAINER_NAME_LABEL]: name } });
    const container = running[0];
    if (container === undefined) throw failed(`container ${name} not found`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await d.cri.checkpointContainer({ containerId: container.id, location, ...(timeout === undefined ? {} : { timeout }) });
  } catch (err) {
    throw err instanceof HttpError ? err : failed(messageOf(err));
  }
  return location;
}

export function checkpointRoutes(d: CheckpointDeps): Route[] {
  return [{
    pattern: '/checkpoint/:namespace/:pod/:container', methods: ['POST'], bucket: 'checkpoint',
    async handle({ res, url, params }) {
      const timeout = parseTimeout(url.searchParams.get('timeout'));
      const location = await checkpoint(d, params.namespace ?? '', params.pod ?? '', params.container ?? '', timeout);
      sendJson(res, 200, { items: [location] });
    },
  }];
}

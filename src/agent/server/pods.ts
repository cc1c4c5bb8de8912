/**
 * /pods: the pods the agent runs as a v1 PodList, each with the newest status the agent
 * computed (upstream's pod manager pods with the status manager's statuses). /runningpods/:
 * what the runtime runs for the agent (ready sandboxes, running containers), as upstream's
 * minimal pods: name, namespace and UID, one container per running container (name, image)
 * and one per sandbox (named by the sandbox ID).
 */
import type { NodePod } from '../../api/pod/index.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../kuberuntime/index.js';
import type { PodsView, ServerCri } from './host.js';
import { sendJson } from './http.js';
import type { Handler, Route } from './router.js';

function podListJson(items: readonly unknown[]): string {
  return JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items });
}

/** The pods with their statuses, as /pods lists them. */
export function podsWithStatus(view: PodsView, pods = view.desiredPods(), statuses = pods.map((p) => view.podStatus(p.metadata.uid))): NodePod[] {
  return pods.map((pod, i) => {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = pod;
    return { ...rest, status: statuses[i] ?? pod.status ?? {} };
  });
}

interface MinimalPod {
  metadata: { name: string; namespace: string; uid: string; creationTimestamp: null };
  spec: { containers: { name: string; image?: string; resources: Record<string, never> }[] };
  status: Record<string, never>;
}

export async function runningPods(cri: ServerCri): Promise<MinimalPod[]> {
  const [sandboxes, containers] = await Promise.all([
    cri.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
    cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
  ]);
  const pods = new Map<string, MinimalPod>();
  const podOf = (labels: Readonly<Record<string, string>>): MinimalPod | undefined => {
    const uid = labels[POD_UID_LABEL];
    if (uid === undefined) return undefined;
    let pod = pods.get(uid);
    if (pod === undefined) {
      pod = {
        metadata: { name: labels[POD_NAME_LABEL] ?? '', namespace: labels[POD_NAMESPACE_LABEL] ?? '', uid, creationTimestamp: null },
        spec: { containers: [] },
        status: {},
      };
      pods.set(uid, pod);
    }
    return pod;
  };
  for (const c of containers) {
    const image = c.image?.image ?? '';
    podOf(c.labels)?.spec.containers.push({ name: c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '', ...(image === '' ? {} : { image }), resources: {} });
  }
  for (const s of sandboxes) podOf(s.labels)?.spec.containers.push({ name: s.id, resources: {} });
  return [...pods.values()];
}

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The encoded /pods body, encoded again only when a pod or a status object changed (the
 * sources and the status manager replace objects, never mutate them): with 110 pods the
 * encoding costs more than the rest of the request.
 */
function podListEncoder(view: PodsView): () => Buffer {
  let last: { pods: readonly NodePod[]; statuses: readonly unknown[]; body: Buffer } | undefined;
  return () => {
    const pods = view.desiredPods();
    const statuses = pods.map((p) => view.podStatus(p.metadata.uid));
    if (last !== undefined && sameItems(last.pods, pods) && sameItems(last.statuses, statuses)) return last.body;
    const body = Buffer.from(podListJson(podsWithStatus(view, pods, statuses)));
    last = { pods, statuses, body };
    return body;
  };
}

export function podRoutes(view: PodsView, cri: ServerCri): { pods: Route[]; runningPods: Route[] } {
  const encoded = podListEncoder(view);
  const pods: Route = {
    pattern: '/pods', methods: ['GET'], bucket: 'pods',
    handle: ({ res }) => { sendJson(res, 200, encoded()); },
  };
  const running: Handler = async ({ res }) => {
    sendJson(res, 200, podListJson(await runningPods(cri)));
  };
  return {
    pods: [pods],
    runningPods: [
      { pattern: '/runningpods', methods: ['GET'], bucket: 'runningpods', handle: running },
      { pattern: '/runningpods/', methods: ['GET'], bucket: 'runningpods', handle: running },
    ],
  };
}

/**
 * Mirror pods (upstream: the kubelet's mirror client and pod manager): every static pod (from
 * the manifest path or URL) gets a copy in the API server, so that the cluster sees it. The
 * mirror has the static pod's name, namespace, labels and spec, its annotations plus
 * orch.io/config.mirror (the static pod's config hash), and the Node as owner. A mirror that
 * someone deleted is made again; one whose hash does not match (the manifest changed, or
 * someone edited its annotation) or that is being deleted (someone deleted it) is deleted at once and made again; mirrors of
 * static pods that are gone are deleted. Edits to a mirror never reach the static pod (mirror
 * pods are not a pod source).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SEEN_ANNOTATION, isStaticPod, podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import { statusOf } from '../orchclient/index.js';
import type { RestClient } from '../orchclient/index.js';

export interface MirrorPodsOptions {
  readonly rest: RestClient;
  readonly nodeName: string;
  readonly logger: Logger;
  /** The periodic check's timer. */
  readonly clock: Clock;
  /** The pods the agent runs (static ones get mirrors). */
  readonly desiredPods: () => readonly NodePod[];
  /** The mirror pods the API server holds for this node (from the pod watch). */
  readonly mirrors: () => readonly NodePod[];
  /** The Node's UID once registered (the owner reference); mirrors wait for it. */
  readonly nodeUID: () => string | undefined;
  /** A mirror was made for this static pod (its status can be written now). */
  readonly onCreated?: (staticPodUID: string) => void;
  /** How often mirrors are checked besides on changes (default 10 s). */
  readonly periodMs?: number;
}

export interface MirrorPods {
  start(): void;
  stop(): Promise<void>;
  /** Check the mirrors soon (a static pod or a mirror changed). */
  requestSync(): void;
  /** A desired pod has nothing left running: a static pod that finished or went away changes what mirrors there should be. */
  podFinished(pod: NodePod): void;
  /** One pass now (tests). */
  sync(): Promise<void>;
}

const hashOf = (pod: NodePod): string => pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? pod.metadata.uid;

/** The mirror pod object of a static pod. */
export function mirrorPodFor(pod: NodePod, nodeName: string, nodeUID: string): Pod {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(pod.metadata.annotations ?? {})) if (k !== CONFIG_SEEN_ANNOTATION) annotations[k] = v;
  annotations[CONFIG_MIRROR_ANNOTATION] = hashOf(pod);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      ...(pod.metadata.labels === undefined ? {} : { labels: pod.metadata.labels }),
      annotations,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID, controller: true }],
    },
    spec: { ...pod.spec, nodeName, containers: pod.spec?.containers ?? [] },
  };
}

export function createMirrorPods(options: MirrorPodsOptions): MirrorPods {
  const { rest, logger: log } = options;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: Timer | undefined;
  let stopped = false;

  async function remove(mirror: NodePod, why: string): Promise<void> {
    const { namespace: ns, name } = mirror.metadata;
    try {
      await rest.delete(`/api/v1/namespaces/${ns}/pods/${name}`, {
        apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: mirror.metadata.uid },
      });
      log.info('Deleted mirror pod', { pod: `${ns}/${name}`, why });
    } catch (err) {
      const code = statusOf(err)?.code;
      if (code !== 404 && code !== 409) log.warn('Deleting a mirror pod failed; retrying', { pod: `${ns}/${name}`, err: messageOf(err) });
    }
  }

  async function create(pod: NodePod, nodeUID: string): Promise<void> {
    const body = mirrorPodFor(pod, options.nodeName, nodeUID);
    try {
      await rest.create(`/api/v1/namespaces/${pod.metadata.namespace}/pods`, body);
      log.info('Created mirror pod', { pod: podNamespacedName(body) });
      options.onCreated?.(pod.metadata.uid);
    } catch (err) {
      const s = statusOf(err);
      // AlreadyExists: a pod of that name is there (ours, seen soon through the watch, or a user's).
      if (s?.reason === 'AlreadyExists') log.v(2, 'Mirror pod exists already', { pod: podNamespacedName(body) });
      else log.warn('Creating a mirror pod failed; retrying', { pod: podNamespacedName(body), err: messageOf(err) });
    }
  }

  async function pass(): Promise<void> {
    const statics = new Map<string, NodePod>();
    for (const pod of options.desiredPods()) if (isStaticPod(pod)) statics.set(podNamespacedName(pod), pod);
    const mirrors = new Map<string, NodePod>();
    for (const m of options.mirrors()) mirrors.set(podNamespacedName(m), m);
    const work: Promise<void>[] = [];
    for (const [key, mirror] of mirrors) {
      const pod = statics.get(key);
      if (pod === undefined) work.push(remove(mirror, 'its static pod is gone'));
      else if (mirror.metadata.deletionTimestamp !== undefined) work.push(remove(mirror, 'someone deleted it; it is made again'));
      else if (mirror.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== hashOf(pod)) work.push(remove(mirror, 'it does not match its static pod'));
    }
    const nodeUID = options.nodeUID();
    if (nodeUID !== undefined) {
      for (const [key, pod] of statics) {
        if (!mirrors.has(key)) work.push(create(pod, nodeUID));
      }
    }
    await Promise.all(work);
  }

  function kick(): void {
    if (stopped) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => { log.warn('Mirror pod sync failed', { err: messageOf(err) }); })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  }

  return {
    start() {
      const tick = (): void => {
        kick();
        timer = options.clock.setTimer(options.periodMs ?? 10_000, tick);
      };
      tick();
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
    requestSync: kick,
    podFinished(pod) {
      if (isStaticPod(pod)) kick();
    },
    async sync() {
      await pass();
    },
  };
}

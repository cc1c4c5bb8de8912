/**
 * /containerLogs/{namespace}/{pod}/{container}: a container's log as upstream serves it.
 * The query is decoded as v1 PodLogOptions (follow, previous, timestamps, tailLines, tail,
 * limitBytes, sinceSeconds, sinceTime): an undecodable value is a 400, an invalid one (a
 * negative tailLines, limitBytes or sinceSeconds below 1, both since forms) a 422. An unknown
 * pod or container is a 404; a container without logs yet (waiting, or no previous instance)
 * a 400 with upstream's wording. The log is read from the file the runtime reports for the
 * instance (the upstream layout under podLogsDir), with the files rotation made of it
 * (rotated-log.ts), and streamed as it is read.
 */
import type { ContainerStatus } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../api/clock.js';
import { messageOf } from '../../../api/errors.js';
import type { PodsView, ServerCri } from '../host.js';
import { findPod } from '../host.js';
import { HttpError, TEXT } from '../http.js';
import type { Route } from '../router.js';
import type { LogReadOptions } from './cri-log.js';
import { streamContainerLog } from './rotated-log.js';
import type { NodePod } from '../../../api/pod/index.js';
import { quoteValue } from '../../../api/quote.js';

export interface PodLogOptions {
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  readonly tailLines?: number;
  readonly limitBytes?: number;
  readonly sinceSeconds?: number;
  readonly sinceTime?: Date;
}

/** Upstream's query conversion: a bool is false only for "false" and "0" (any case of false). */
function bool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

function int64(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[-+]?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new HttpError(400, `{"message": "Unable to decode query: ${name}: ${JSON.stringify(v).replace(/"/g, "'")} is not an integer."}`);
  }
  return Number(v);
}

/** Decodes and validates the query (HttpError 400 or 422). */
export function parsePodLogOptions(query: URLSearchParams): PodLogOptions {
  const q = new URLSearchParams(query);
  const tail = q.get('tail');
  if (tail !== null && tail !== '') {
    if (tail === 'all') q.delete('tailLines');
    else q.set('tailLines', tail);
  }
  const tailLines = int64(q, 'tailLines');
  const limitBytes = int64(q, 'limitBytes');
  const sinceSeconds = int64(q, 'sinceSeconds');
  let sinceTime: Date | undefined;
  const st = q.get('sinceTime');
  if (st !== null && st !== '' && st !== 'null') {
    const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(st) && !Number.isNaN(Date.parse(st));
    if (!ok) throw new HttpError(400, `{"message": "Unable to decode query: sinceTime: '${st}' is not an RFC 3339 time."}`);
    sinceTime = new Date(st);
  }
  const problems: string[] = [];
  if (tailLines !== undefined && tailLines < 0) problems.push('tailLines must be greater than or equal to 0');
  if (limitBytes !== undefined && limitBytes < 1) problems.push('limitBytes must be greater than 0');
  if (sinceSeconds !== undefined && sinceTime !== undefined) problems.push('at most one of sinceTime or sinceSeconds may be specified');
  else if (sinceSeconds !== undefined && sinceSeconds < 1) problems.push('sinceSeconds must be greater than 0');
  if (problems.length > 0) throw new HttpError(422, `{"message": "Invalid request: ${problems.join('; ')}."}`);
  return {
    follow: bool(q, 'follow'), previous: bool(q, 'previous'), timestamps: bool(q, 'timestamps'),
    ...(tailLines === undefined ? {} : { tailLines }), ...(limitBytes === undefined ? {} : { limitBytes }),
    ...(sinceSeconds === undefined ? {} : { sinceSeconds }), ...(sinceTime === undefined ? {} : { sinceTime }),
  };
}

function hasContainer(pod: NodePod, name: string): boolean {
  const s = pod.spec;
  return [...(s?.containers ?? []), ...(s?.initContainers ?? []), ...(s?.ephemeralContainers ?? [])].some((c) => c.name === name);
}

const stripRuntime = (id: string): string => id.replace(/^[a-z0-9-]+:\/\//, '');

/** The container ID whose log to read, as upstream's validateContainerLogStatus picks it. */
export function logContainerId(pod: NodePod, name: string, previous: boolean): string {
  const podName = pod.metadata.name;
  const st = pod.status;
  const cs: ContainerStatus | undefined = [...(st?.containerStatuses ?? []), ...(st?.initContainerStatuses ?? []), ...(st?.ephemeralContainerStatuses ?? [])]
    .find((c) => c.name === name);
  if (cs === undefined) throw new HttpError(400, `container "${name}" in pod "${podName}" is not available`);
  const last = cs.lastState?.terminated;
  const { waiting, running, terminated } = cs.state ?? {};
  if (previous) {
    if (last?.containerID === undefined || last.containerID === '') throw new HttpError(400, `previous terminated container "${name}" in pod "${podName}" not found`);
    return stripRuntime(last.containerID);
  }
  if (running !== undefined) return stripRuntime(cs.containerID ?? '');
  if (terminated !== undefined) {
    const id = terminated.containerID ?? last?.containerID ?? '';
    if (id === '') throw new HttpError(400, `container "${name}" in pod "${podName}" is terminated`);
    return stripRuntime(id);
  }
  if (last !== undefined) {
    if ((last.containerID ?? '') === '') throw new HttpError(400, `container "${name}" in pod "${podName}" is terminated`);
    return stripRuntime(last.containerID ?? '');
  }
  if (waiting !== undefined) {
    const reason = waiting.reason ?? '';
    if (reason === 'ErrImagePull') throw new HttpError(400, `container "${name}" in pod "${podName}" is waiting to start: image can't be pulled`);
    if (reason === 'ImagePullBackOff') throw new HttpError(400, `container "${name}" in pod "${podName}" is waiting to start: trying and failing to pull image`);
    throw new HttpError(400, `container "${name}" in pod "${podName}" is waiting to start: ${reason}`);
  }
  throw new HttpError(400, `container "${name}" in pod "${podName}" is waiting to start - no logs yet`);
}

export function containerLogRoutes(view: PodsView, cri: ServerCri, clock: Pick<Clock, 'now'>): Route[] {
  return [{
    pattern: '/containerLogs/:namespace/:pod/:container',
    methods: ['GET'],
    bucket: 'containerLogs',
    longRunning: true,
    async handle({ res, url, params }) {
      const o = parsePodLogOptions(url.searchParams);
      const namespace = params.namespace ?? '';
      const podName = params.pod ?? '';
      const name = params.container ?? '';
      const pod = findPod(view, namespace, podName);
      if (pod === undefined) throw new HttpError(404, `pod "${podName}" does not exist`);
      if (!hasContainer(pod, name)) throw new HttpError(404, `container "${name}" not found in pod "${podName}"`);
      const id = logContainerId(pod, name, o.previous);
      let logPath: string;
      try {
        logPath = (await cri.containerStatus({ containerId: id })).status?.logPath ?? '';
      } catch (err) {
        throw new HttpError(400, `failed to get container status ${quoteValue(id)}: ${messageOf(err)}`);
      }
      if (logPath === '') throw new HttpError(400, `container "${name}" in pod "${podName}" has no log file`);
      const read: LogReadOptions = {
        timestamps: o.timestamps,
        follow: o.follow,
        ...(o.tailLines === undefined ? {} : { tailLines: o.tailLines }),
        ...(o.limitBytes === undefined ? {} : { limitBytes: o.limitBytes }),
        ...(o.sinceTime !== undefined ? { sinceMs: o.sinceTime.getTime() } : o.sinceSeconds !== undefined ? { sinceMs: clock.now() - o.sinceSeconds * 1000 } : {}),
      };
      const abort = new AbortController();
      res.once('close', () => { abort.abort(); });
      const state = { started: false };
      const start = (): void => {
        if (state.started) return;
        state.started = true;
        res.writeHead(200, { 'content-type': TEXT, 'x-content-type-options': 'nosniff' });
        res.flushHeaders();
      };
      if (o.follow) start();
      try {
        await streamContainerLog(logPath, read, {
          write(chunk) {
            start();
            if (res.write(chunk) || res.destroyed) return Promise.resolve();
            return new Promise((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
          },
        }, {
          signal: abort.signal,
          // A container the runtime no longer knows is not running: following ends.
          isRunning: () => cri.containerStatus({ containerId: id }).then((r) => r.status?.state === 'CONTAINER_RUNNING', () => false),
        });
      } catch (err) {
        if (!state.started) throw new HttpError(400, `failed to read the log of container "${name}" in pod "${podName}": ${messageOf(err)}`);
        res.destroy(err instanceof Error ? err : new Error(messageOf(err)));
        return;
      }
      start();
      res.end();
    },
  }];
}

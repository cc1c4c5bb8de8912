/**
 * A subscription to containerd's event service (containerd.services.events.v1.Events) over the
 * runtime's socket, for the task events of one namespace (k8s.io, where containerd's CRI plugin
 * keeps pods): a task created, started, exited, OOM-killed, deleted. Only the events of a
 * task's own process are handed on (an exec probe's exit is not a container's).
 *
 * The service never says when a subscription is in place, and an event published before it is
 * lost to it; so after subscribing the client publishes a marker event of its own (topic
 * /nodeagent/pleg-subscribed, a nonce as payload) until it comes back on the stream: from then
 * on nothing is missed, and `onLive` says so.
 */
import { randomUUID } from 'node:crypto';
import { Metadata, credentials, type Client, type ClientReadableStream } from '@grpc/grpc-js';
import type { Clock, Timer } from '../../../api/clock.js';
import { OrchError } from '../../../api/errors.js';
import { grpcErrorText, grpcPackage, protoType, unaryCall } from '../../../api/grpc-proto.js';
import { parseCriEndpoint } from '../cri/index.js';

/** The subscription failed or ended (containerd stopped or restarted, or never answered the marker). */
export const CRI_EVENTS_STREAM_FAILED = 'CRI_EVENTS_STREAM_FAILED';

const PROTO = 'containerd-events-v1.proto';
const PACKAGE = 'containerd.services.events.v1';
export const MARKER_TOPIC = '/nodeagent/pleg-subscribed';
/** How often the marker is published until it comes back, and how many times. */
const MARKER_INTERVAL_MS = 200;
const MARKER_TRIES = 25;
const PUBLISH_DEADLINE_MS = 5000;

export type TaskTopic = 'create' | 'start' | 'exit' | 'oom' | 'delete';
const TOPICS: Readonly<Record<string, { readonly topic: TaskTopic; readonly type: string }>> = {
  '/tasks/create': { topic: 'create', type: 'TaskCreate' },
  '/tasks/start': { topic: 'start', type: 'TaskStart' },
  '/tasks/exit': { topic: 'exit', type: 'TaskExit' },
  '/tasks/oom': { topic: 'oom', type: 'TaskOOM' },
  '/tasks/delete': { topic: 'delete', type: 'TaskDelete' },
};

/** A task event of a container's (or sandbox's) own process. */
export interface TaskEvent {
  readonly topic: TaskTopic;
  /** The container's id: a CRI container's or a sandbox's (its pause container's). */
  readonly containerId: string;
}

export interface TaskEventHandlers {
  onEvent(event: TaskEvent): void;
  /** The subscription is in place: every event from now on reaches onEvent. */
  onLive(): void;
  /** The subscription failed or ended (CRI_EVENTS_STREAM_FAILED); nothing more comes from it. */
  onFailed(err: OrchError): void;
}

export interface TaskEventSubscription {
  /** Ends the subscription; no handler is called after. Idempotent. */
  close(): void;
}

export interface TaskEventSource {
  subscribe(handlers: TaskEventHandlers): TaskEventSubscription;
}

export interface ContainerdEvents extends TaskEventSource {
  /** Closes the channel (a subscription open ends without a call of onFailed). */
  close(): void;
}

export interface ContainerdEventsOptions {
  /** The runtime endpoint (--container-runtime-endpoint). */
  readonly endpoint: string;
  /** containerd's namespace of the CRI plugin (default k8s.io). */
  readonly namespace?: string;
  /** Times the marker's repeats. */
  readonly clock: Pick<Clock, 'setTimer'>;
}

interface Envelope {
  readonly namespace: string;
  readonly topic: string;
  readonly event: { readonly typeUrl: string; readonly value: Buffer } | null;
}

/** containerd's filters (an OR of them) for the task topics and the marker, in `namespace`. */
export function subscriptionFilters(namespace: string): string[] {
  return [...Object.keys(TOPICS), MARKER_TOPIC].map((t) => `namespace==${JSON.stringify(namespace)},topic==${JSON.stringify(t)}`);
}

/**
 * The task event an envelope carries, or undefined: another topic, or an exec process's
 * exit or deletion. Throws on a payload that does not decode.
 */
export function taskEventOf(topic: string, payload: Uint8Array): TaskEvent | undefined {
  const known = TOPICS[topic];
  if (known === undefined) return undefined;
  const message = protoType(PROTO, `${PACKAGE}.${known.type}`).decode(payload);
  const containerId = String(Reflect.get(message, 'containerId') ?? '');
  if (containerId === '') return undefined;
  if (known.topic === 'exit' || known.topic === 'delete') {
    const process = String(Reflect.get(message, 'id') ?? '');
    if (process !== '' && process !== containerId) return undefined;
  }
  return { topic: known.topic, containerId };
}

function failure(message: string, cause?: unknown): OrchError {
  return new OrchError(CRI_EVENTS_STREAM_FAILED, 'unavailable', message, { subject: 'containerd events', cause });
}

/** containerd's event service on the runtime's socket. Nothing is sent before the first subscribe. */
export function connectContainerdEvents(options: ContainerdEventsOptions): ContainerdEvents {
  const namespace = options.namespace ?? 'k8s.io';
  const target = parseCriEndpoint(options.endpoint, '--container-runtime-endpoint').target;
  const pkg = grpcPackage(PROTO);
  const Events = Reflect.get(Reflect.get(Reflect.get(Reflect.get(pkg, 'containerd') as object, 'services') as object, 'events') as object, 'v1') as Record<string, unknown>;
  const Constructor = Events.Events as new (target: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => Client;
  const client = new Constructor(target, credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 3000,
    'grpc.enable_channelz': 0,
  });
  const open = new Set<() => void>();

  return {
    subscribe(handlers) {
      const nonce = randomUUID();
      let done = false;
      let live = false;
      let markerTimer: Timer | undefined;
      const stream = (Reflect.get(client, 'Subscribe') as (req: object, md: Metadata) => ClientReadableStream<Envelope>)
        .call(client, { filters: subscriptionFilters(namespace) }, new Metadata());
      const end = (): void => {
        done = true;
        open.delete(cancel);
        markerTimer?.cancel();
      };
      const fail = (err: OrchError): void => {
        if (done) return;
        end();
        stream.cancel();
        handlers.onFailed(err);
      };
      function cancel(): void {
        if (done) return;
        end();
        stream.cancel();
      }
      open.add(cancel);
      stream.on('data', (envelope: Envelope) => {
        if (done) return;
        if (envelope.topic === MARKER_TOPIC) {
          if (!live && envelope.event?.value.toString() === nonce) {
            live = true;
            markerTimer?.cancel();
            handlers.onLive();
          }
          return;
        }
        let event: TaskEvent | undefined;
        try {
          event = taskEventOf(envelope.topic, envelope.event?.value ?? Buffer.alloc(0));
        } catch (err) {
          fail(failure(`containerd's ${envelope.topic} event does not decode: ${String(err)}`, err));
          return;
        }
        if (event !== undefined) handlers.onEvent(event);
      });
      stream.on('error', (err: unknown) => { fail(failure(`containerd's event stream failed: ${grpcErrorText(err)}`, err)); });
      stream.on('end', () => { fail(failure("containerd's event stream ended")); });
      const metadata = new Metadata();
      metadata.set('containerd-namespace', namespace);
      let tries = 0;
      const publishMarker = (): void => {
        markerTimer = undefined;
        if (done || live) return;
        if (++tries > MARKER_TRIES) {
          fail(failure(`containerd did not hand back the subscription marker in ${(MARKER_TRIES * MARKER_INTERVAL_MS) / 1000}s`));
          return;
        }
        unaryCall(client, 'Publish', { topic: MARKER_TOPIC, event: { typeUrl: 'nodeagent.pleg.Subscribed', value: Buffer.from(nonce) } }, metadata, PUBLISH_DEADLINE_MS)
          .then(() => {
            if (!done && !live) markerTimer = options.clock.setTimer(MARKER_INTERVAL_MS, publishMarker);
          }, (err: unknown) => { fail(failure(`publishing the subscription marker failed: ${grpcErrorText(err)}`, err)); });
      };
      publishMarker();
      return { close: cancel };
    },
    close() {
      for (const cancel of [...open]) cancel();
      client.close();
    },
  };
}

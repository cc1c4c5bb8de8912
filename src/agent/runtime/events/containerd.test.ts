import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Server, ServerCredentials, type ServerWritableStream, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { realClock } from '../../../api/clock.js';
import type { OrchError } from '../../../api/errors.js';
import { grpcPackage, protoType } from '../../../api/grpc-proto.js';
import { waitFor } from '../../../../test/helpers/wait.js';
import { connectContainerdEvents, subscriptionFilters, taskEventOf, type TaskEvent } from './index.js';

const PROTO = 'containerd-events-v1.proto';
const encode = (type: string, value: object): Buffer => Buffer.from(protoType(PROTO, `containerd.services.events.v1.${type}`).encode(value).finish());

void describe('containerd task events', () => {
  void it('decodes the task events of a container\'s own process, not an exec\'s', () => {
    assert.deepEqual(taskEventOf('/tasks/exit', encode('TaskExit', { containerId: 'c1', id: 'c1', exitStatus: 3 })), { topic: 'exit', containerId: 'c1' });
    assert.equal(taskEventOf('/tasks/exit', encode('TaskExit', { containerId: 'c1', id: 'exec-7', exitStatus: 0 })), undefined, 'an exec probe\'s exit');
    assert.deepEqual(taskEventOf('/tasks/delete', encode('TaskDelete', { containerId: 'c1', pid: 9 })), { topic: 'delete', containerId: 'c1' });
    assert.equal(taskEventOf('/tasks/delete', encode('TaskDelete', { containerId: 'c1', id: 'exec-7' })), undefined);
    assert.deepEqual(taskEventOf('/tasks/start', encode('TaskStart', { containerId: 's1', pid: 10 })), { topic: 'start', containerId: 's1' });
    assert.deepEqual(taskEventOf('/tasks/oom', encode('TaskOOM', { containerId: 'c2' })), { topic: 'oom', containerId: 'c2' });
    assert.deepEqual(taskEventOf('/tasks/create', encode('TaskCreate', { containerId: 'c3', pid: 11 })), { topic: 'create', containerId: 'c3' });
    assert.equal(taskEventOf('/containers/create', Buffer.alloc(0)), undefined);
  });

  void it('filters on the namespace and each topic, quoted as containerd\'s filter syntax wants', () => {
    const filters = subscriptionFilters('k8s.io');
    assert.equal(filters.length, 6);
    assert.ok(filters.includes('namespace=="k8s.io",topic=="/tasks/exit"'));
    assert.ok(filters.includes('namespace=="k8s.io",topic=="/nodeagent/pleg-subscribed"'));
  });
});

/** containerd's event exchange in miniature: Publish hands the event to every subscriber. */
void describe('subscribing to a containerd event service', () => {
  let dir: string;
  let endpoint: string;
  let server: Server | undefined;
  const subscribers = new Set<ServerWritableStream<{ filters: string[] }, object>>();
  let filtersSeen: string[] = [];
  let publishedNamespaces: string[] = [];
  /** Drops the first N markers (the subscription "not yet in place"). */
  let dropMarkers = 0;

  const broadcast = (namespace: string, topic: string, typeUrl: string, value: Buffer): void => {
    for (const s of subscribers) s.write({ namespace, topic, event: { typeUrl, value } });
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ctrd-events-'));
    endpoint = `unix://${path.join(dir, 'containerd.sock')}`;
    const pkg = grpcPackage(PROTO) as unknown as { containerd: { services: { events: { v1: { Events: { service: ServiceDefinition } } } } } };
    const s = new Server();
    s.addService(pkg.containerd.services.events.v1.Events.service, {
      Subscribe: (call: ServerWritableStream<{ filters: string[] }, object>) => {
        filtersSeen = call.request.filters;
        subscribers.add(call);
        call.on('cancelled', () => { subscribers.delete(call); });
      },
      Publish: (call: ServerUnaryCall<{ topic: string; event: { typeUrl: string; value: Buffer } }, object>, callback: sendUnaryData<object>) => {
        publishedNamespaces.push(String(call.metadata.get('containerd-namespace')[0]));
        if (dropMarkers > 0) dropMarkers--;
        else broadcast('k8s.io', call.request.topic, call.request.event.typeUrl, call.request.event.value);
        callback(null, {});
      },
    });
    await new Promise<void>((resolve, reject) => {
      s.bindAsync(endpoint, ServerCredentials.createInsecure(), (err) => { if (err === null) resolve(); else reject(err); });
    });
    server = s;
  });

  after(async () => {
    server?.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  void it('is live once its marker comes back (published again until it does), then hands on task events and says when the stream fails', async () => {
    dropMarkers = 2;
    publishedNamespaces = [];
    const events = connectContainerdEvents({ endpoint, clock: realClock });
    const got: TaskEvent[] = [];
    let live = 0;
    let failure: OrchError | undefined;
    events.subscribe({ onEvent: (e) => got.push(e), onLive: () => { live++; }, onFailed: (err) => { failure = err; } });
    await waitFor('the subscription live', () => live === 1, { timeoutMs: 5000 });
    assert.deepEqual(filtersSeen, subscriptionFilters('k8s.io'));
    assert.ok(publishedNamespaces.length >= 3, 'the marker published until it came back');
    assert.ok(publishedNamespaces.every((n) => n === 'k8s.io'));
    broadcast('k8s.io', '/tasks/exit', 'containerd.events.TaskExit', encode('TaskExit', { containerId: 'c1', id: 'exec-1' }));
    broadcast('k8s.io', '/tasks/exit', 'containerd.events.TaskExit', encode('TaskExit', { containerId: 'c1', id: 'c1', exitStatus: 2 }));
    await waitFor('the exit', () => got.length === 1, { timeoutMs: 5000 });
    assert.deepEqual(got, [{ topic: 'exit', containerId: 'c1' }]);
    for (const s of subscribers) s.end();
    await waitFor('the failure', () => failure !== undefined, { timeoutMs: 5000 });
    assert.equal(failure?.code, 'CRI_EVENTS_STREAM_FAILED');
    assert.equal(live, 1);
    events.close();
  });

  void it('fails the subscription when nothing answers at the socket', async () => {
    const events = connectContainerdEvents({ endpoint: `unix://${path.join(dir, 'nothing.sock')}`, clock: realClock });
    const failure = await new Promise<OrchError>((resolve) => {
      events.subscribe({ onEvent: () => undefined, onLive: () => undefined, onFailed: resolve });
    });
    assert.equal(failure.code, 'CRI_EVENTS_STREAM_FAILED');
    assert.match(failure.message, /Unavailable|No connection|ENOENT/i);
    events.close();
  });
});

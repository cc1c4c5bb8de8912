import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { UpdateRecorder, advanceUntil, podYAML } from './fixtures.js';
import { createPodConfig, type PodConfig } from './pod-config.js';


/** A local manifest server: answers every request with `status` and `body`, and counts them. */
interface ManifestServer {
  readonly url: string;
  status: number;
  body: string;
  requests: number;
  lastHeaders: IncomingHttpHeaders;
  close(): Promise<void>;
}

async function startServer(): Promise<ManifestServer> {
  const state = { status: 200, body: '', requests: 0, lastHeaders: {} as IncomingHttpHeaders };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    state.lastHeaders = req.headers;
    res.writeHead(state.status, { 'content-type': 'application/yaml' });
    res.end(state.body);
  });
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/pods`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => {
          if (err === undefined) resolve();
          else reject(err);
        });
      }),
  });
}

let server: ManifestServer;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.close();
});

/** The poll interval of the tests' pod configs. */
const POLL_MS = 30;

async function start(headers: Record<string, string[]> = {}): Promise<{ config: PodConfig; recorder: UpdateRecorder; logger: FakeLogger; clock: FakeClock }> {
  const logger = new FakeLogger();
  const clock = new FakeClock();
  const config = createPodConfig({
    nodeName: 'node1',
    staticPodPath: '',
    fileCheckFrequencyMs: 0,
    staticPodURL: server.url,
    staticPodURLHeader: headers,
    httpCheckFrequencyMs: POLL_MS,
    logger,
    clock,
  });
  cleanups.push(() => config.stop());
  const recorder = new UpdateRecorder();
  config.subscribe(recorder.listener);
  await config.start();
  return { config, recorder, logger, clock };
}

/** Moves the clock on by `count` polls and waits for their requests; each poll comes POLL_MS after the last one ended. */
async function morePolls(clock: FakeClock, count: number): Promise<void> {
  const target = server.requests + count;
  const fired = await advanceUntil(clock, `${count} more polls`, () => server.requests >= target);
  assert.deepEqual(fired, Array<number>(count).fill(POLL_MS));
}

function podList(...names: string[]): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodList',
    items: names.map((name) => ({ metadata: { name }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } })),
  });
}

void describe('URL source', () => {
  void it('sends the configured headers, values in order', async () => {
    server.body = podYAML('web');
    await start({ 'X-Token': ['secret'], 'X-Multi': ['one', 'two'] });
    assert.equal(server.lastHeaders['x-token'], 'secret');
    assert.equal(server.lastHeaders['x-multi'], 'one, two');
  });

  void it('reads a single pod, marked http and named for the node', async () => {
    server.body = podYAML('web');
    const { config, recorder } = await start();
    assert.equal(config.sourcesReady(), true);
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
    const pod = recorder.byName('web-node1')!;
    assert.equal(pod.metadata.annotations!['orch.io/config.source'], 'http');
    assert.equal(pod.spec!.nodeName, 'node1');
  });

  void it('reads a PodList and a List', async () => {
    server.body = podList('a', 'b');
    const { recorder, clock } = await start();
    assert.deepEqual(recorder.currentNames(), ['a-node1', 'b-node1']);
    server.body = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c' }, spec: { containers: [{ name: 'm', image: 'x:1' }] } }] });
    await advanceUntil(clock, 'the List read', () => recorder.currentNames().join() === 'c-node1');
  });

  void it('turns a change into REMOVE and ADD, and an empty body into no pods', async () => {
    server.body = podList('a', 'b');
    const { recorder, clock } = await start();
    const oldB = recorder.byName('b-node1')!.metadata.uid;
    server.body = podList('a', 'c');
    assert.equal(server.requests, 1);
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [POLL_MS], 'the next poll is due POLL_MS after the first');
    await clock.advance(POLL_MS - 1);
    assert.equal(server.requests, 1, 'not polled before the interval passed');
    await advanceUntil(clock, 'b replaced by c', () => recorder.currentNames().join() === 'a-node1,c-node1');
    assert.deepEqual(recorder.updates.filter((u) => u.op === 'REMOVE').flatMap((u) => u.pods.map((p) => p.metadata.uid)), [oldB]);
    server.body = '';
    await advanceUntil(clock, 'every pod removed', () => recorder.currentNames().length === 0);
  });

  void it('keeps the last pods when the server fails or sends a bad body, logging each failure once', async () => {
    server.body = podList('a');
    const { recorder, logger, clock } = await start();
    assert.deepEqual(recorder.currentNames(), ['a-node1']);
    server.status = 500;
    await morePolls(clock, 3);
    assert.equal(logger.matching('HTTP 500').length, 1, logger.texts().join('\n'));
    server.status = 200;
    server.body = 'kind: Pod\napiVersion: v1\nmetadata: [\n';
    await morePolls(clock, 3);
    assert.equal(logger.matching('cannot decode', server.url).length, 1, logger.texts().join('\n'));
    assert.deepEqual(recorder.currentNames(), ['a-node1']);
    assert.deepEqual(recorder.names('REMOVE'), []);
    server.body = podList('a', 'b');
    await advanceUntil(clock, 'b added once the body is good', () => recorder.currentNames().join() === 'a-node1,b-node1');
  });

  void it('leaves out an invalid pod of a list, logging it, and keeps the others', async () => {
    server.body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: [
        { metadata: { name: 'good' }, spec: { containers: [{ name: 'main', image: 'x:1' }] } },
        { metadata: { name: 'bad' }, spec: { containers: [{ name: 'Main', image: 'x:1' }] } },
        { metadata: { name: 'good' }, spec: { containers: [{ name: 'other', image: 'x:1' }] } },
      ],
    });
    const { recorder, logger } = await start();
    assert.deepEqual(recorder.currentNames(), ['good-node1']);
    assert.equal(logger.matching('rejected a pod', 'spec.containers[0].name').length, 1, logger.texts().join('\n'));
    assert.equal(logger.matching('rejected a pod', 'earlier pod').length, 1, logger.texts().join('\n'));
  });

  void it('is not ready before a first good fetch, and becomes ready after one', async () => {
    server.status = 404;
    const { config, recorder, clock } = await start();
    assert.equal(config.sourcesReady(), false);
    server.status = 200;
    server.body = podYAML('web');
    await advanceUntil(clock, 'ready', () => config.sourcesReady());
    assert.deepEqual(recorder.currentNames(), ['web-node1']);
  });
});

void describe('URL source errors', () => {
  void it('logs a network error with its cause and stays not ready', async () => {
    const closed = await startServer();
    const url = closed.url;
    await closed.close();
    const logger = new FakeLogger();
    const config = createPodConfig({
      nodeName: 'node1', staticPodPath: '', fileCheckFrequencyMs: 0, staticPodURL: url, staticPodURLHeader: {}, httpCheckFrequencyMs: 0, logger, clock: new FakeClock(),
    });
    cleanups.push(() => config.stop());
    await config.start();
    assert.equal(config.sourcesReady(), false);
    assert.equal(logger.matching(`cannot fetch ${url}`, 'ECONNREFUSED').length, 1, logger.texts().join('\n'));
  });
});

void describe('pod config', () => {
  void it('waits for push sources too, and stops cleanly', async () => {
    server.body = podYAML('web');
    const logger = new FakeLogger();
    const config = createPodConfig({
      nodeName: 'node1', staticPodPath: '', fileCheckFrequencyMs: 0, staticPodURL: server.url, staticPodURLHeader: {},
      httpCheckFrequencyMs: POLL_MS, logger, clock: new FakeClock(), pushSources: ['api'],
    });
    const recorder = new UpdateRecorder();
    config.subscribe(recorder.listener);
    await config.start();
    await config.start();
    assert.equal(config.sourcesReady(), false);
    config.pushSnapshot('api', []);
    assert.equal(config.sourcesReady(), true);
    await config.stop();
    config.pushSnapshot('api', [{ metadata: { name: 'x', namespace: 'default', uid: 'u' } }]);
    assert.deepEqual(recorder.names('ADD'), ['web-node1']);
    await config.stop();
  });
});

/**
 * The agent's event recorder against a real orch-apiserver (SQLite): single events about a pod,
 * a container and the node are created where upstream's kubelet puts them, and a repeated event
 * becomes one Event whose series counts the repeats (patched at the second occurrence, the
 * last count written by stop()).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import { createEventRecorder, nodeReference, podReference, type EventObject } from '../../src/agent/events/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { createRestClient, loadOrchconfig, type RestClient } from '../../src/agent/orchclient/index.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';

const NODE = 'events-it-node';
const PATH = '/apis/events.orch.io/v1/namespaces/default/events';
const logLines: string[] = [];
const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 5, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_s, l) => logLines.push(l) } }).logger('events-it');

void describe('event recorder against orch-apiserver', () => {
  let server: ApiServer;
  let rest: RestClient;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite' });
    rest = createRestClient({ clock: realClock, connection: await loadOrchconfig(server.adminKubeconfig), qps: 0, burst: 0 });
  });
  after(async () => {
    rest.close();
    await server.stop();
  });

  void it('writes single events and folds a repeated one into a series', async () => {
    const recorder = createEventRecorder({ rest, reportingInstance: NODE, qps: 50, burst: 100, logger, clock: realClock });
    const pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-web' } };
    recorder.event(nodeReference(NODE), 'Normal', 'Starting', 'StartNodeagent', 'Starting nodeagent.');
    recorder.event(podReference(pod), 'Normal', 'Scheduled', 'Binding', 'Pod admitted');
    recorder.event(podReference(pod, { name: 'app' }), 'Normal', 'Pulled', 'Pulling', 'Container image "busybox" already present on machine');
    for (let i = 0; i < 3; i++) recorder.event(podReference(pod, { name: 'app' }), 'Warning', 'BackOff', 'Restarting', 'Back-off restarting failed container app');
    await recorder.flush();

    const listed = await rest.list<EventObject>(PATH);
    assert.equal(listed.items.length, 4, JSON.stringify(listed.items, null, 1));
    const byReason = new Map(listed.items.map((e) => [e.reason, e]));
    const starting = byReason.get('Starting');
    assert.ok(starting);
    assert.deepEqual(starting.regarding, { kind: 'Node', name: NODE, uid: NODE });
    assert.equal(starting.reportingController, 'nodeagent');
    assert.equal(starting.reportingInstance, NODE);
    assert.match(starting.metadata.name, new RegExp(`^${NODE}\\.[0-9a-f]+$`));
    assert.match(starting.eventTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(byReason.get('Pulled')?.regarding.fieldPath, 'spec.containers{app}');
    assert.equal(byReason.get('Scheduled')?.series, undefined);
    // The second occurrence was patched in at once; the third waits for the heartbeat or the end.
    assert.equal(byReason.get('BackOff')?.series?.count, 2);

    await recorder.stop();
    const after = await rest.list<EventObject>(PATH, { query: { fieldSelector: 'reason=BackOff' } });
    assert.equal(after.items.length, 1);
    assert.equal(after.items[0]?.series?.count, 3);
    assert.equal(logLines.filter((l) => l.startsWith('W') || l.startsWith('E')).length, 0, logLines.join(''));
  });
});

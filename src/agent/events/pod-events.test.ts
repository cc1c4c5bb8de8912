import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventAction, recordPodEvent } from './pod-events.js';
import { FakeEventRecorder } from './testing.js';

void describe('pod events', () => {
  void it('names the container by its list and the action by the reason', () => {
    const recorder = new FakeEventRecorder();
    const pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u' }, spec: { initContainers: [{ name: 'init' }], containers: [{ name: 'app' }] } };
    recordPodEvent(recorder, { type: 'Warning', reason: 'BackOff', message: 'm', pod, container: 'init' });
    recordPodEvent(recorder, { type: 'Normal', reason: 'Killing', message: 'k', pod, container: 'app' });
    recordPodEvent(recorder, { type: 'Warning', reason: 'FailedMount', message: 'f', pod });
    assert.deepEqual(recorder.events.map((e) => [e.regarding.fieldPath, e.action]), [
      ['spec.initContainers{init}', 'Pull'],
      ['spec.containers{app}', 'Kill'],
      [undefined, 'FailedMount'],
    ]);
    assert.equal(eventAction('Unhealthy'), 'Probe');
  });
});

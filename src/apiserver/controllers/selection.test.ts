import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controllerEnabled, controllerListProblems } from './selection.js';

void describe('--controllers', () => {
  void it('reads * , name and -name as kube-controller-manager does', () => {
    assert.equal(controllerEnabled(['*'], 'scheduler'), true);
    assert.equal(controllerEnabled([], 'scheduler'), false);
    assert.equal(controllerEnabled(['*', '-scheduler'], 'scheduler'), false);
    assert.equal(controllerEnabled(['*', '-scheduler'], 'node-lifecycle-controller'), true);
    assert.equal(controllerEnabled(['scheduler'], 'pod-garbage-collector-controller'), false);
    assert.equal(controllerEnabled(['-podgc', '*'], 'pod-garbage-collector-controller'), false);
    assert.equal(controllerEnabled(['nodelifecycle'], 'node-lifecycle-controller'), true);
    assert.equal(controllerEnabled(['*', '-attachdetach'], 'persistentvolume-attach-detach-controller'), false);
    assert.equal(controllerEnabled(['pvc-protection'], 'persistentvolumeclaim-protection-controller'), true);
  });

  void it('names each unknown controller', () => {
    assert.deepEqual(controllerListProblems(['*', '-scheduler', 'podgc']), []);
    assert.deepEqual(controllerListProblems(['*', '-sheduler']), [
      '--controllers: "sheduler" is not in the list of known controllers: scheduler, node-lifecycle-controller, taint-eviction-controller, pod-garbage-collector-controller, serviceaccount-controller, root-ca-certificate-publisher-controller, '
        + 'persistentvolume-binder-controller, persistentvolume-attach-detach-controller, persistentvolumeclaim-protection-controller, persistentvolume-protection-controller, '
        + 'ephemeral-volume-controller',
    ]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogRoot } from '../logging/index.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { createPleg } from './index.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
type Obj = { id: string; state: string; labels: Record<string, string> };

void describe('PLEG', () => {
  void it('reports each pod whose sandboxes or containers changed, once per relist', async () => {
    let sandboxes: Obj[] = [{ id: 's1', state: 'SANDBOX_READY', labels: { [POD_UID_LABEL]: 'a' } }];
    let containers: Obj[] = [
      { id: 'c1', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } },
      { id: 'c2', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'b' } },
      { id: 'x', state: 'CONTAINER_RUNNING', labels: {} },
    ];
    const changed: string[][] = [];
    let batch: string[] = [];
    let now = 1000;
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.resolve(sandboxes), listContainers: () => Promise.resolve(containers) },
      logger, onPodChanged: (uid) => batch.push(uid), now: () => now,
    });
    const relist = async (): Promise<void> => {
      batch = [];
      await pleg.relist();
      changed.push(batch.sort());
    };
    assert.equal(pleg.health().healthy, false);
    await relist();
    await relist();
    containers = [{ ...containers[0]!, state: 'CONTAINER_EXITED' }, containers[1]!];
    await relist();
    sandboxes = [];
    containers = [containers[0]!];
    await relist();
    assert.deepEqual(changed, [['a', 'b'], [], ['a'], ['a', 'b']]);
    assert.equal(pleg.health().healthy, true);
    now += 4 * 60_000;
    assert.match(pleg.health().message, /the last relist was 240s ago/);
    await pleg.stop();
  });

  void it('stays unhealthy and quiet while the runtime is down', async () => {
    const seen: string[] = [];
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.reject(new Error('connection refused')), listContainers: () => Promise.resolve([]) },
      logger, onPodChanged: (uid) => seen.push(uid),
    });
    await pleg.relist();
    assert.deepEqual(seen, []);
    assert.match(pleg.health().message, /has not relisted yet: connection refused/);
    await pleg.stop();
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import { CONFIG_MIRROR_ANNOTATION, type NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { createApiPodSource } from './api-source.js';

const spec = { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] };

/** A source over `rest` whose pushes a test awaits one by one. */
function setup(rest: FakeRestClient): { source: ReturnType<typeof createApiPodSource>; logger: FakeLogger; nextPush: () => Promise<readonly NodePod[]> } {
  const logger = new FakeLogger();
  const pushes: (readonly NodePod[])[] = [];
  let wake: (() => void) | undefined;
  const source = createApiPodSource({
    rest, clock: new FakeClock(), nodeName: 'n1', logger,
    push: (pods) => { pushes.push(pods); wake?.(); },
  });
  const nextPush = async (): Promise<readonly NodePod[]> => {
    while (pushes.length === 0) await new Promise<void>((resolve) => { wake = resolve; });
    return pushes.shift() ?? [];
  };
  return { source, logger, nextPush };
}

const names = (pods: readonly NodePod[]): string[] => pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();

void describe('the API pod source', () => {
  void it('delivers the pods of the node as NodePods, mirror pods apart, and leaves out a pod without an identity', async () => {
    const rest = new FakeRestClient();
    rest.put('/api/v1/namespaces/shop/pods/web', { metadata: { name: 'web', namespace: 'shop' }, spec });
    rest.put('/api/v1/namespaces/kube-system/pods/static-n1', { metadata: { name: 'static-n1', namespace: 'kube-system', annotations: { [CONFIG_MIRROR_ANNOTATION]: 'h' } }, spec });
    const { source, logger, nextPush } = setup(rest);
    source.start();
    try {
      assert.deepEqual(names(await nextPush()), ['shop/web']);
      assert.deepEqual(names(source.mirrors()), ['kube-system/static-n1']);
      const web = (await rest.get<NodePod>('/api/v1/namespaces/shop/pods/web')).metadata.uid;
      assert.equal(source.byUID(web)?.metadata.name, 'web');
      assert.equal(source.mirrorOf('kube-system', 'static-n1')?.metadata.name, 'static-n1');

      const [watch] = rest.watches;
      assert.ok(watch !== undefined);
      watch.emit({ type: 'ADDED', object: { metadata: { name: 'no-uid', namespace: 'shop', resourceVersion: '900' }, spec } });
      watch.emit({ type: 'ADDED', object: { metadata: { name: 'no-ns', uid: 'u-2', resourceVersion: '901' }, spec } });
      const pods = await nextPush();
      assert.deepEqual(names(pods), ['default/no-ns', 'shop/web'], 'a pod without a namespace is in the default one');
      assert.equal(logger.lines.filter((l) => l.level === 'warn' && l.msg.includes('without an identity')).length, 1);
      assert.equal(logger.lines.find((l) => l.msg.includes('without an identity'))?.fields.problem, 'metadata.uid: is required');
    } finally {
      await source.stop();
    }
  });
});

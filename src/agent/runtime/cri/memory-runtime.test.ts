/**
 * The FakeRuntime: the CRI behaviour suite (what containerd does, see
 * test/integration/cri-behaviour.test.ts), and the test controls the suite does not cover.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../../api/errors.js';
import { EXEC_CASES, FakeRuntime, runCriBehaviour } from './testing.js';

const IMAGE = 'registry.test/library/busybox:1.35';

runCriBehaviour('FakeRuntime', () => {
  const fake = new FakeRuntime();
  fake.images.set(IMAGE, 'sha256:busybox');
  fake.registry.set(IMAGE, 'sha256:busybox');
  for (const { cmd, result } of EXEC_CASES) fake.execResults.set(cmd.join(' '), result);
  let uid = 0;
  return Promise.resolve({
    runtime: fake,
    image: IMAGE,
    pullable: IMAGE,
    absent: 'registry.test/library/absent:1',
    command: ['sleep', 'infinity'],
    sandboxConfig: ({ name, network, labels, annotations }) => ({
      metadata: { name, uid: `uid-${++uid}`, namespace: 'cri-behaviour', attempt: 0 },
      logDirectory: `/var/log/pods/uid-${uid}`,
      labels,
      annotations,
      linux: { securityContext: { namespaceOptions: { network, pid: 'CONTAINER', ipc: 'POD' } } },
    }),
    exit: (containerId, code) => {
      fake.exit(containerId, code);
      return Promise.resolve();
    },
    cleanup: () => Promise.resolve(),
  });
});

void describe('FakeRuntime test controls', () => {
  const config = { metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 }, labels: { app: 'web' } };

  void it('records every call, fails the next call of a method on demand, and marks a failed start StartError', async () => {
    const fake = new FakeRuntime(() => 1_000);
    fake.images.set('img', 'sha256:i');
    const sandbox = await fake.runPodSandbox({ config });
    const id = await fake.createContainer({ podSandboxId: sandbox, sandboxConfig: config, config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'img' } } });
    fake.failNext('startContainer', new OrchError('CRI_ERROR', 'internal', 'no such file'));
    await assert.rejects(fake.startContainer(id), /no such file/);
    const { status } = await fake.containerStatus({ containerId: id });
    assert.deepEqual([status?.state, status?.exitCode, status?.reason, status?.message], ['CONTAINER_EXITED', 128, 'StartError', 'no such file']);
    assert.deepEqual(fake.calls.map((c) => c.method), ['runPodSandbox', 'createContainer', 'startContainer', 'containerStatus']);
    assert.deepEqual(fake.callsOf('startContainer'), [id]);
    assert.equal(BigInt(status?.createdAt ?? '0') / 1_000_000n, 1_000n, 'timestamps from the clock given, in nanoseconds');
  });

  void it('reports the usage set per container as container and pod stats, and the image filesystem', async () => {
    const fake = new FakeRuntime();
    fake.images.set('img', 'sha256:i');
    const sandbox = await fake.runPodSandbox({ config });
    const ids: string[] = [];
    for (const name of ['a', 'b']) {
      const id = await fake.createContainer({ podSandboxId: sandbox, sandboxConfig: config, config: { metadata: { name, attempt: 0 }, image: { image: 'img' }, labels: { name } } });
      await fake.startContainer(id);
      fake.usage.set(id, { memoryWorkingSetBytes: 4096, cpuCoreNanoSeconds: 2e9 });
      ids.push(id);
    }
    assert.equal((await fake.containerStats(ids[0] ?? '')).memory?.workingSetBytes?.value, '4096');
    assert.deepEqual((await fake.listContainerStats({ labelSelector: { name: 'b' } })).map((s) => s.attributes?.id), [ids[1]]);
    const [pod] = await fake.listPodSandboxStats();
    assert.equal(pod?.linux?.memory?.workingSetBytes?.value, '8192');
    assert.equal(pod.linux.containers.length, 2);
    fake.imageFs.usedBytes = 123;
    assert.equal((await fake.imageFsInfo()).imageFilesystems[0]?.usedBytes?.value, '123');
    assert.match(await fake.exec({ containerId: ids[0] ?? '', cmd: ['ls'] }), /^http:\/\/127\.0\.0\.1:0\/exec\//);
  });
});

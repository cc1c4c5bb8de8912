import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerStatus } from '../runtime/cri/index.js';
import { containerState, messageFromCriLog, nanosToMs, terminationMessage, toRuntimeContainerStatus, toRuntimeSandboxStatus } from './status.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'na-status-'));
});
after(() => rm(dir, { recursive: true, force: true }));

function status(extra: Partial<ContainerStatus> = {}): ContainerStatus {
  return {
    id: 'c1', metadata: { name: 'meta-name', attempt: 4 }, state: 'CONTAINER_EXITED', createdAt: '1000000000', startedAt: '2000000000', finishedAt: '3500000000',
    exitCode: 1, image: { image: 'docker.io/library/busybox:1.35' }, imageRef: 'sha256:x', reason: 'Error', message: '', labels: { 'io.orch.container.name': 'app', 'io.orch.container.type': 'init' },
    annotations: { 'io.orch.container.restartCount': '2', 'io.orch.container.hash': 'abcd0123', 'io.orch.container.image': 'busybox:1.35' },
    mounts: [], logPath: '', resources: null, imageId: '', user: null, imageSource: '', ...extra,
  };
}

void describe('status conversion', () => {
  void it('converts times, states and the agent annotations', async () => {
    assert.equal(nanosToMs('1700000000123456789'), 1700000000123);
    assert.equal(containerState('CONTAINER_CREATED'), 'created');
    assert.equal(containerState('CONTAINER_UNKNOWN'), 'unknown');
    assert.deepEqual(await toRuntimeContainerStatus(status()), {
      id: 'c1', name: 'app', state: 'exited', createdAt: 1000, startedAt: 2000, finishedAt: 3500, exitCode: 1, reason: 'Error', message: '',
      image: 'busybox:1.35', imageRef: 'sha256:x', restartCount: 2, hash: 'abcd0123', init: true,
    });
    const bare = await toRuntimeContainerStatus(status({ labels: {}, annotations: {} }));
    assert.deepEqual([bare.name, bare.restartCount, bare.image, bare.init, bare.hash], ['meta-name', 4, 'docker.io/library/busybox:1.35', false, '']);
  });

  void it('sandbox IPs: primary and additional; none on the host network', () => {
    const base = { id: 's', metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 3 }, state: 'SANDBOX_READY' as const, createdAt: '5000000', labels: {}, annotations: {}, runtimeHandler: '' };
    const pod = toRuntimeSandboxStatus(base, { ...base, network: { ip: '10.0.0.2', additionalIps: [{ ip: 'fd00::2' }] }, linux: { namespaces: { options: { network: 'POD' } } } });
    assert.deepEqual(pod, { id: 's', state: 'ready', createdAt: 5, attempt: 3, ips: ['10.0.0.2', 'fd00::2'], hostNetwork: false });
    const host = toRuntimeSandboxStatus(base, { ...base, state: 'SANDBOX_NOTREADY', network: { ip: '', additionalIps: [] }, linux: { namespaces: { options: { network: 'NODE' } } } });
    assert.deepEqual([host.state, host.ips, host.hostNetwork], ['notready', [], true]);
  });
});

void describe('termination messages', () => {
  void it('reads the file mounted at the termination message path, at most 4096 bytes from its end', async () => {
    const file = path.join(dir, 'msg');
    await writeFile(file, `${'x'.repeat(5000)}END`);
    const s = status({ annotations: { 'io.orch.container.terminationMessagePath': '/dev/termination-log' }, mounts: [{ containerPath: '/dev/termination-log', hostPath: file }] });
    const message = await terminationMessage(s);
    assert.equal(message.length, 4096);
    assert.ok(message.endsWith('END'));
    assert.equal((await toRuntimeContainerStatus({ ...s, message: 'runtime says' })).message.slice(0, 14), 'runtime says: ');
  });

  void it('falls back to the log tail with FallbackToLogsOnError and a failure exit code only', async () => {
    const log = path.join(dir, '0.log');
    await writeFile(log, '2024-01-01T00:00:00.000000000Z stdout F first\n2024-01-01T00:00:00.1Z stderr P part-\n2024-01-01T00:00:00.2Z stderr F two\n');
    const annotations = { 'io.orch.container.terminationMessagePath': '/dev/termination-log', 'io.orch.container.terminationMessagePolicy': 'FallbackToLogsOnError' };
    assert.equal(await terminationMessage(status({ annotations, logPath: log })), 'first\npart-two\n');
    assert.equal(await terminationMessage(status({ annotations, logPath: log, exitCode: 0 })), '');
    assert.equal(await terminationMessage(status({ annotations: { ...annotations, 'io.orch.container.terminationMessagePolicy': 'File' }, logPath: log })), '');
    assert.equal(await terminationMessage(status({ annotations, logPath: path.join(dir, 'absent.log') })), '');
  });

  void it('messageFromCriLog keeps the last lines and skips a cut first line', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `t stdout F line${i}`).join('\n');
    const text = messageFromCriLog(`ut F cut\n${lines}\n`, 80);
    assert.ok(text.startsWith('line20\n'));
    assert.ok(text.endsWith('line99\n'));
  });
});

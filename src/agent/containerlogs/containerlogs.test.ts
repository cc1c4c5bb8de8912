import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { containerLogFiles, createContainerLogManager, removeContainerLogFiles, rotatedName, type ContainerLogManagerOptions } from './index.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A fake runtime with one running container whose log is `<dir>/main/0.log`; reopening creates the log anew, as containerd does. */
async function node(o: { labelled?: boolean } = {}): Promise<{ runtime: FakeRuntime; id: string; log: string; dir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'containerlogs-'));
  dirs.push(dir);
  const runtime = new FakeRuntime();
  runtime.images.set('busybox', 'sha256:bb');
  const labels = o.labelled === false ? {} : { [POD_UID_LABEL]: 'uid-1' };
  const sandboxConfig = { metadata: { name: 'p', uid: 'uid-1', namespace: 'ns', attempt: 0 }, logDirectory: dir, labels };
  const sandbox = await runtime.runPodSandbox({ config: sandboxConfig });
  const id = await runtime.createContainer({ podSandboxId: sandbox, sandboxConfig, config: { metadata: { name: 'main', attempt: 0 }, image: { image: 'busybox' }, logPath: 'main/0.log', labels } });
  await runtime.startContainer(id);
  const log = path.join(dir, 'main', '0.log');
  await mkdir(path.dirname(log), { recursive: true });
  await writeFile(log, '');
  const reopen = runtime.reopenContainerLog.bind(runtime);
  runtime.reopenContainerLog = async (cid: string) => {
    await reopen(cid);
    await writeFile(log, '', { flag: 'a' });
  };
  return { runtime, id, log, dir };
}

function manager(runtime: FakeRuntime, clock: FakeClock, extra: Partial<ContainerLogManagerOptions> = {}) {
  const logger = new FakeLogger();
  return { logger, m: createContainerLogManager({ runtime, clock, logger, maxSizeBytes: 100, maxFiles: 3, ...extra }) };
}

const names = async (dir: string): Promise<string[]> => (await readdir(dir)).sort();

void describe('the container log manager', () => {
  void it('renames a log past the size with its timestamp, has the runtime reopen it, and leaves smaller logs alone', async () => {
    const { runtime, id, log } = await node();
    const clock = new FakeClock();
    const { m } = manager(runtime, clock);
    await writeFile(log, 'x'.repeat(99));
    assert.deepEqual(await m.check(), { checked: 1, rotated: 0, failed: 0 });
    await writeFile(log, 'y', { flag: 'a' });
    assert.deepEqual(await m.check(), { checked: 1, rotated: 1, failed: 0 });
    assert.deepEqual(await names(path.dirname(log)), ['0.log', path.basename(rotatedName(log, clock.now()))]);
    assert.equal(await readFile(rotatedName(log, clock.now()), 'utf8'), `${'x'.repeat(99)}y`);
    assert.equal(await readFile(log, 'utf8'), '', 'the runtime opened a new log');
    assert.deepEqual(runtime.callsOf('reopenContainerLog'), [id]);
    assert.equal(runtime.callsOf('containerStatus').length, 1, 'the log path is asked for once per container');
  });

  void it('gzips the older rotated files and keeps at most maxFiles files', async () => {
    const { runtime, log } = await node();
    const clock = new FakeClock();
    const { m } = manager(runtime, clock);
    const stamps: number[] = [];
    for (let i = 0; i < 4; i++) {
      await writeFile(log, `round ${i} ${'z'.repeat(120)}\n`, { flag: 'a' });
      stamps.push(clock.now());
      assert.equal((await m.check()).rotated, 1);
      await clock.advance(1000);
    }
    const [older, newest] = [rotatedName(log, stamps[2] ?? 0), rotatedName(log, stamps[3] ?? 0)];
    assert.deepEqual(await names(path.dirname(log)), ['0.log', `${path.basename(older)}.gz`, path.basename(newest)].sort());
    assert.match(gunzipSync(await readFile(`${older}.gz`)).toString(), /^round 2 z+\n$/);
    assert.match(await readFile(newest, 'utf8'), /^round 3 /);
    assert.deepEqual(await containerLogFiles(log), [`${older}.gz`, newest, log], 'oldest first, the log last');
  });

  void it('puts the log back when the runtime refuses to reopen it, and rotates it at the next check', async () => {
    const { runtime, log } = await node();
    const clock = new FakeClock();
    const { m, logger } = manager(runtime, clock);
    await writeFile(log, 'a'.repeat(200));
    runtime.failNext('reopenContainerLog', new OrchError('CRI_ERROR', 'internal', 'reopen is not supported'));
    assert.deepEqual(await m.check(), { checked: 1, rotated: 0, failed: 1 });
    assert.deepEqual(await names(path.dirname(log)), ['0.log']);
    assert.ok(logger.has('Failed to rotate the log of a container'));
    assert.match(String(logger.at('warn')[0]?.fields.err), /CONTAINERLOGS|reopening it: reopen is not supported/);
    await clock.advance(1000);
    assert.equal((await m.check()).rotated, 1);
  });

  void it('has the runtime reopen a log removed behind its back', async () => {
    const { runtime, id, log } = await node();
    const { m } = manager(runtime, new FakeClock());
    await rm(log);
    assert.deepEqual(await m.check(), { checked: 1, rotated: 0, failed: 0 });
    assert.deepEqual(runtime.callsOf('reopenContainerLog'), [id]);
    assert.equal(await readFile(log, 'utf8'), '');
  });

  void it('removes what an interrupted rotation left before rotating', async () => {
    const { runtime, log } = await node();
    const { m } = manager(runtime, new FakeClock(Date.UTC(2030, 0, 1)));
    await writeFile(`${log}.20240101-000000`, 'compressed already');
    await writeFile(`${log}.20240101-000000.gz`, 'gz');
    await writeFile(`${log}.20240102-000000.gz.tmp`, 'half');
    await writeFile(log, 'b'.repeat(100));
    assert.equal((await m.check()).rotated, 1);
    assert.deepEqual((await names(path.dirname(log))).filter((n) => n.includes('2024')), ['0.log.20240101-000000.gz']);
  });

  void it('looks only at running containers that carry the agent label', async () => {
    const unlabelled = await node({ labelled: false });
    await writeFile(unlabelled.log, 'c'.repeat(500));
    assert.deepEqual(await manager(unlabelled.runtime, new FakeClock()).m.check(), { checked: 0, rotated: 0, failed: 0 });
    const exited = await node();
    await writeFile(exited.log, 'c'.repeat(500));
    exited.runtime.exit(exited.id, 0);
    assert.deepEqual(await manager(exited.runtime, new FakeClock()).m.check(), { checked: 0, rotated: 0, failed: 0 });
    assert.deepEqual([...unlabelled.runtime.callsOf('containerStatus'), ...exited.runtime.callsOf('containerStatus')], []);
  });

  void it('checks every monitor period on the clock until stopped', async () => {
    const { runtime } = await node();
    const clock = new FakeClock();
    const { m } = manager(runtime, clock, { monitorPeriodMs: 3000 });
    m.start();
    const lists = (): number => runtime.callsOf('listContainers').length;
    const until = async (cond: () => boolean): Promise<void> => {
      for (let i = 0; i < 500 && !cond(); i++) await settle(1);
      assert.ok(cond());
    };
    await until(() => lists() === 1 && clock.pending().length === 1);
    assert.equal(clock.pending()[0]?.delayMs, 3000);
    await clock.advance(3000);
    await until(() => lists() === 2 && clock.pending().length === 1);
    await m.stop();
    assert.equal(clock.pending().length, 0);
  });

  void it('refuses options out of range', () => {
    const runtime = new FakeRuntime();
    assert.throws(() => createContainerLogManager({ runtime, clock: new FakeClock(), logger: new FakeLogger(), maxSizeBytes: 0, maxFiles: 1 }),
      (err: unknown) => err instanceof OrchError && err.code === 'CONTAINERLOGS_INVALID_OPTIONS' && /maxSizeBytes.*maxFiles must be 2 or more, got 1/.test(err.message));
  });
});

void describe('a container log on disk', () => {
  void it('is removed with its rotated files, and nothing of another instance', async () => {
    const { log, dir } = await node();
    await writeFile(`${log}.20240101-000000.gz`, '');
    await writeFile(`${log}.20240101-000001`, '');
    await writeFile(path.join(dir, 'main', '1.log'), '');
    await removeContainerLogFiles(log);
    assert.deepEqual(await names(path.join(dir, 'main')), ['1.log']);
    await removeContainerLogFiles(path.join(dir, 'gone', '0.log'));
  });
});

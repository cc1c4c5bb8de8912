import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodePod } from '../../../api/pod/index.js';
import { HttpError } from '../http.js';
import { logContainerId, parsePodLogOptions } from './container-logs.js';
import { resolveLogPath } from './files.js';
import { journalArgs, parseNodeLogQuery, validateNodeLogQuery } from './query.js';

const q = (s: string): URLSearchParams => new URLSearchParams(s);
const status = (fn: () => unknown): number => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
  return 200;
};

void describe('container log options', () => {
  void it('decode as upstream decodes PodLogOptions', () => {
    assert.deepEqual(parsePodLogOptions(q('follow=true&timestamps=1&previous=false&tailLines=10&limitBytes=5&sinceSeconds=3')), {
      follow: true, timestamps: true, previous: false, tailLines: 10, limitBytes: 5, sinceSeconds: 3,
    });
    assert.deepEqual(parsePodLogOptions(q('follow=yes&tail=all')), { follow: true, previous: false, timestamps: false });
    assert.equal(parsePodLogOptions(q('tail=7')).tailLines, 7);
    assert.equal(parsePodLogOptions(q('sinceTime=2024-01-02T03:04:05Z')).sinceTime?.toISOString(), '2024-01-02T03:04:05.000Z');
  });

  void it('answer 400 for undecodable values and 422 for invalid ones', () => {
    for (const bad of ['tailLines=abc', 'limitBytes=1.5', 'sinceSeconds=', 'sinceTime=yesterday']) assert.equal(status(() => parsePodLogOptions(q(bad))), 400, bad);
    for (const bad of ['tailLines=-1', 'limitBytes=0', 'sinceSeconds=0', 'sinceSeconds=5&sinceTime=2024-01-02T03:04:05Z']) assert.equal(status(() => parsePodLogOptions(q(bad))), 422, bad);
  });

  void it('pick the container instance as upstream does', () => {
    const pod = (cs: Record<string, unknown>): NodePod => ({ metadata: { uid: 'u1', name: 'p', namespace: 'default' }, status: { containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: 1, ...cs }] } });
    const last = { terminated: { exitCode: 1, containerID: 'containerd://old' } };
    assert.equal(logContainerId(pod({ containerID: 'containerd://new', state: { running: {} }, lastState: last }), 'c', false), 'new');
    assert.equal(logContainerId(pod({ containerID: 'containerd://new', state: { running: {} }, lastState: last }), 'c', true), 'old');
    assert.equal(logContainerId(pod({ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: last }), 'c', false), 'old');
    assert.throws(() => logContainerId(pod({ state: { running: {} } }), 'c', true), /previous terminated container "c" in pod "p" not found/);
    assert.throws(() => logContainerId(pod({ state: { waiting: { reason: 'ErrImagePull' } } }), 'c', false), /image can't be pulled/);
    assert.throws(() => logContainerId(pod({ state: {} }), 'c', false), /no logs yet/);
    assert.throws(() => logContainerId(pod({}), 'x', false), /container "x" in pod "p" is not available/);
  });
});

void describe('the node log directory and query', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'logs-test-'));
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'a.log'), 'a');
    await symlink('/etc', join(dir, 'escape'));
    await symlink(join(dir, 'sub', 'a.log'), join(dir, 'inside'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('refuses paths that leave the directory', async () => {
    assert.deepEqual(await resolveLogPath(dir, 'sub/a.log'), { full: join(dir, 'sub', 'a.log'), isDir: false });
    assert.equal((await resolveLogPath(dir, 'inside')).isDir, false);
    await assert.rejects(resolveLogPath(dir, '../etc/passwd'), (err: unknown) => err instanceof HttpError && err.status === 400);
    await assert.rejects(resolveLogPath(dir, 'sub/../../x'), (err: unknown) => err instanceof HttpError && err.status === 400);
    await assert.rejects(resolveLogPath(dir, 'escape/passwd'), (err: unknown) => err instanceof HttpError && err.status === 404);
    await assert.rejects(resolveLogPath(dir, 'missing'), (err: unknown) => err instanceof HttpError && err.status === 404);
  });

  void it('decodes and validates a node log query as upstream', () => {
    assert.equal(parseNodeLogQuery(q('')), undefined);
    assert.equal(parseNodeLogQuery(q('other=1')), undefined);
    assert.deepEqual(parseNodeLogQuery(q('query=kubelet&query=/var/log/x.log&tailLines=5&pattern=err')), {
      services: ['kubelet'], files: ['/var/log/x.log'], tailLines: 5, pattern: 'err',
    });
    assert.equal(status(() => parseNodeLogQuery(q('query=%20%20'))), 400);
    assert.equal(status(() => parseNodeLogQuery(q('query=a&tailLines=x'))), 400);
    assert.equal(status(() => parseNodeLogQuery(q('query=a&sinceTime=2024'))), 400);
    const problems = (s: string): string[] => validateNodeLogQuery(parseNodeLogQuery(q(s)) ?? { services: [], files: [] });
    assert.deepEqual(problems('query=containerd'), []);
    assert.match(problems('query=a/b&query=c').join(), /cannot specify a file and service/);
    assert.match(problems('query=a/b&query=c/d').join(), /more than one file/);
    assert.match(problems('query=a/b&tailLines=3').join(), /file with options/);
    assert.match(problems('query=a&tailLines=100001').join(), /tailLines/);
    assert.match(problems('query=a&boot=1').join(), /must be less than 1/);
    assert.match(problems('query=a$b').join(), /unsupported characters/);
    assert.match(problems('query=a&pattern=(').join(), /pattern/);
    assert.match(problems('query=a&sinceTime=2024-01-02T00:00:00Z&untilTime=2024-01-01T00:00:00Z').join(), /must be after `sinceTime`/);
    assert.deepEqual(journalArgs({ services: [], files: [], tailLines: 3, pattern: 'x', boot: 0, sinceTime: new Date('2024-01-02T03:04:05Z') }, ['ssh']), [
      '--utc', '--no-pager', '--output=short-precise', '--since=2024-01-02 03:04:05 UTC', '--pager-end', '--lines=3', '--unit=ssh', '--grep=x', '--boot', '0',
    ]);
  });
});

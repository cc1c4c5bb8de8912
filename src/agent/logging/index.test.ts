import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { LogRoot, type LoggingOptions } from './index.js';

function capture(options: Partial<LoggingOptions> = {}): { root: LogRoot; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const root = new LogRoot({
    format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9,
    clock: new FakeClock(Date.UTC(2026, 10, 22, 3, 4, 5, 123)),
    sink: { write: (stream, line) => (stream === 'out' ? out : err).push(line) },
    ...options,
  });
  return { root, out, err };
}

void describe('logger', () => {
  void it('writes text lines as upstream does, to standard error by default', () => {
    const { root, err } = capture();
    root.logger('podworkers').info('Pod started', { pod: 'default/web', restarts: 2 });
    assert.equal(err[0], `I1122 03:04:05.123000 ${String(process.pid).padStart(7)} podworkers] Pod started pod="default/web" restarts=2\n`);
  });

  void it('leaves out a field without a value, in text as in JSON (an event without a container)', () => {
    const { root, err } = capture();
    root.logger('kuberuntime').info('Event', { reason: 'MissingClusterDNS', container: undefined, pod: 'default/web' });
    assert.equal(err[0], `I1122 03:04:05.123000 ${String(process.pid).padStart(7)} kuberuntime] Event reason="MissingClusterDNS" pod="default/web"\n`);
    const json = capture({ format: 'json' });
    json.root.logger('kuberuntime').info('Event', { container: undefined });
    assert.equal((JSON.parse(json.err[0] ?? '{}') as Record<string, unknown>).container, undefined);
  });

  void it('honours the verbosity, vmodule and a change at run time', () => {
    const { root, err } = capture({ verbosity: 1, vmodule: [{ filePattern: 'pro*', verbosity: 4 }] });
    const a = root.logger('config');
    const b = root.logger('prober');
    a.v(2, 'hidden');
    b.v(4, 'shown');
    assert.equal(a.enabled(1), true);
    assert.equal(a.enabled(2), false);
    root.setVerbosity(3);
    a.v(2, 'now shown');
    assert.deepEqual(err.map((l) => l.split('] ')[1]), ['shown\n', 'now shown\n']);
  });

  void it('writes JSON with split streams and an info buffer', () => {
    const { root, out, err } = capture({ format: 'json', splitStream: true, infoBufferSize: 1000 });
    const log = root.logger('x');
    log.info('one', { n: 1 });
    log.error('bad', { err: new Error('boom') });
    assert.equal(out.length, 0, 'info is buffered');
    assert.deepEqual(JSON.parse(err[0] ?? ''), { ts: Date.UTC(2026, 10, 22, 3, 4, 5, 123) / 1000, caller: 'x', msg: 'bad', severity: 'error', err: 'boom' });
    root.close();
    assert.deepEqual(JSON.parse(out[0] ?? ''), { ts: Date.UTC(2026, 10, 22, 3, 4, 5, 123) / 1000, caller: 'x', msg: 'one', v: 0, n: 1 });
  });

  void it('flushes buffered info lines every flushFrequency, until closed', async () => {
    const clock = new FakeClock();
    const { root, out } = capture({ format: 'json', splitStream: true, infoBufferSize: 1000, flushFrequency: 5e9, clock });
    root.logger('x').info('one');
    await clock.advance(4999);
    assert.equal(out.length, 0, 'still buffered');
    await clock.advance(1);
    assert.equal(out.length, 1, 'flushed after 5 s');
    root.logger('x').info('two');
    await clock.advance(5000);
    assert.equal(out.length, 2);
    root.close();
    assert.deepEqual(clock.pending(), [], 'no timer left');
  });
});

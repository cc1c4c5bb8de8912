import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogTail, type LogLine, type LogState } from './log-tail.js';
import { FakeApi, FakeTimers, settle } from './testing.js';

void describe('the log tail', () => {
  void it('follows from the tail, then resumes from the last timestamp without repeating lines', async () => {
    const api = new FakeApi();
    const timers = new FakeTimers();
    const lines: LogLine[] = [];
    const states: LogState['kind'][] = [];
    const tail = new LogTail({
      api, timers, namespace: 'ns', pod: 'p', container: 'c', tailLines: 50,
      onLines: (l) => lines.push(...l), onState: (s) => states.push(s.kind),
    });
    tail.start();
    const first = await api.streamCount(1);
    assert.equal(first.path, '/api/v1/namespaces/ns/pods/p/log?container=c&follow=true&timestamps=true&tailLines=50');
    first.write('2024-05-01T10:00:00.1Z one', '2024-05-01T10:00:01.5Z two', '2024-05-01T10:00:01.5Z three');
    first.end();
    await settle();
    assert.deepEqual(states, ['connecting', 'following', 'waiting']);
    assert.deepEqual(timers.delays(), [3000]);
    timers.fireAll();
    const second = await api.streamCount(2);
    assert.equal(second.path, '/api/v1/namespaces/ns/pods/p/log?container=c&follow=true&timestamps=true&sinceTime=2024-05-01T10%3A00%3A01Z');
    // The server sends the whole second again: the two lines already shown are skipped.
    second.write('2024-05-01T10:00:01.2Z zero', '2024-05-01T10:00:01.5Z two', '2024-05-01T10:00:01.5Z three', '2024-05-01T10:00:01.5Z four', '2024-05-01T10:00:02Z five');
    await settle();
    assert.deepEqual(lines.map((l) => l.text), ['one', 'two', 'three', 'four', 'five']);
    tail.stop();
    assert.equal(second.aborted, true);
    assert.equal(timers.pending.size, 0);
  });
});

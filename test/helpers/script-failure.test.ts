import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scriptFailure } from './script-failure.js';

/** An error shaped as execFile's, as its callback gives it. */
function failure(fields: Record<string, unknown>): Error {
  return Object.assign(new Error('Command failed: bash x.sh'), fields);
}

void describe('scriptFailure', () => {
  void it('says a script timed out, with its limit and its last output (stdout, then stderr)', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const text = scriptFailure('containerd-up.sh /tmp/x', failure({ killed: true, signal: 'SIGTERM', code: null, stdout: `${lines}\n`, stderr: 'building images\n' }), 120_000);
    assert.match(text, /^containerd-up\.sh \/tmp\/x timed out after 120 s and was killed; its last output:\n/);
    assert.ok(text.endsWith('line 29\nbuilding images'), text);
    assert.ok(!text.includes('line 10\n'), 'only the last 20 lines');
  });

  void it('gives the exit code or the signal, and says when nothing was printed', () => {
    assert.equal(scriptFailure('a.sh', failure({ code: 3, stdout: '', stderr: 'no such bridge\n' }), 1000), 'a.sh exited with code 3; its last output:\nno such bridge');
    assert.equal(scriptFailure('a.sh', failure({ killed: true, signal: 'SIGKILL', stdout: '', stderr: '' }), 1000), 'a.sh was killed by SIGKILL; it printed nothing');
    assert.equal(scriptFailure('a.sh', failure({ code: 'ENOENT' }), 1000), 'a.sh could not run: Command failed: bash x.sh; it printed nothing');
  });
});

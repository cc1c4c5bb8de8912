import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from './errors.js';
import { INVALID_TAINT, formatTaint, isTaintEffect, parseTaint, parseTaints, validateTaint, type Taint } from './taints.js';

function assertInvalid(fn: () => unknown, includes: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof OrchError);
    assert.equal(err.code, INVALID_TAINT);
    assert.equal(err.category, 'invalid');
    assert.ok(err.message.includes(includes), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(includes)}`);
    return true;
  });
}

void describe('parseTaints', () => {
  void it('reads "" as no taints', () => {
    assert.deepEqual(parseTaints(''), []);
  });

  void it('reads key=value:effect and key:effect, omitting an absent or empty value', () => {
    assert.deepEqual(parseTaints('dedicated=gpu:NoSchedule,node.orch.io/unreachable:NoExecute,spot=:PreferNoSchedule'), [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'node.orch.io/unreachable', effect: 'NoExecute' },
      { key: 'spot', effect: 'PreferNoSchedule' },
    ]);
    const [first] = parseTaints('a:NoSchedule');
    assert.ok(first !== undefined && !('value' in first));
  });

  void it('allows one key with different effects', () => {
    assert.equal(parseTaints('a=1:NoSchedule,a=2:NoExecute').length, 2);
  });

  void it('rejects a key and effect given twice, whatever the values', () => {
    assertInvalid(() => parseTaints('a=1:NoSchedule,a=2:NoSchedule'), 'repeats key "a" with effect NoSchedule');
  });

  const invalid: [string, string][] = [
    ['a', 'it has no effect'],
    ['a=b', 'it has no effect'],
    ['a:b:NoSchedule', "more than one ':'"],
    ['a=b:noschedule', 'unknown effect "noschedule"'],
    ['a=b:', 'unknown effect ""'],
    ['a=b=c:NoSchedule', "more than one '='"],
    [':NoSchedule', 'key name part must not be empty'],
    ['=v:NoSchedule', 'key name part must not be empty'],
    ['-a:NoSchedule', 'key name part must consist of'],
    ['a/b/c:NoSchedule', "key must be a name with an optional DNS subdomain prefix and a single '/'"],
    ['Example.com/a:NoSchedule', 'key prefix part must be a lowercase DNS-1123 subdomain'],
    ['a=-v:NoSchedule', 'value must be empty or consist of'],
    [`a=${'v'.repeat(64)}:NoSchedule`, 'value must be at most 63 characters'],
    [' a=b:NoSchedule', 'key name part must consist of'],
    ['a=b:NoSchedule ', 'unknown effect "NoSchedule "'],
    ['a=b:NoSchedule,', 'invalid taint ""'],
  ];
  for (const [text, message] of invalid) {
    void it(`rejects ${JSON.stringify(text)}`, () => {
      assertInvalid(() => parseTaints(text), message);
    });
  }

  void it('names the item, the allowed forms and the subject', () => {
    assert.throws(
      () => parseTaints('ok:NoSchedule,bad', '--register-with-taints'),
      (err: unknown) => {
        assert.ok(err instanceof OrchError);
        assert.equal(err.subject, '--register-with-taints');
        assert.equal(
          err.message,
          '--register-with-taints: invalid taint "bad": it has no effect; expected <key>=<value>:<effect> or <key>:<effect>, ' +
            'with effect NoSchedule, PreferNoSchedule or NoExecute, e.g. dedicated=gpu:NoSchedule',
        );
        return true;
      },
    );
  });
});

void describe('parseTaint', () => {
  void it('reads one taint', () => {
    assert.deepEqual(parseTaint('example.com/gpu=true:NoExecute'), { key: 'example.com/gpu', value: 'true', effect: 'NoExecute' });
  });
});

void describe('validateTaint', () => {
  void it('accepts valid taints', () => {
    assert.deepEqual(validateTaint({ key: 'a', effect: 'NoSchedule' }), []);
    assert.deepEqual(validateTaint({ key: 'a', value: '', effect: 'NoSchedule' }), []);
    assert.deepEqual(validateTaint({ key: 'example.com/a', value: 'B_1', effect: 'PreferNoSchedule' }), []);
  });

  void it('lists every problem', () => {
    const decoded = JSON.parse('{"key":"-a","value":"b c","effect":"Sometimes"}') as Taint;
    const problems = validateTaint(decoded);
    assert.equal(problems.length, 3);
    assert.match(problems[0] ?? '', /^key name part/);
    assert.match(problems[1] ?? '', /^value must be empty or/);
    assert.equal(problems[2], 'effect "Sometimes" is not supported; use NoSchedule, PreferNoSchedule or NoExecute');
  });
});

void describe('formatTaint and isTaintEffect', () => {
  void it('prints the text form and reads it back', () => {
    for (const text of ['a=b:NoSchedule', 'example.com/a:NoExecute']) {
      assert.equal(formatTaint(parseTaint(text)), text);
    }
    assert.equal(formatTaint({ key: 'a', value: '', effect: 'NoSchedule' }), 'a:NoSchedule');
  });

  void it('knows the three effects', () => {
    assert.ok(isTaintEffect('NoSchedule') && isTaintEffect('PreferNoSchedule') && isTaintEffect('NoExecute'));
    assert.ok(!isTaintEffect('') && !isTaintEffect('noschedule'));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid } from '../../api/errors.js';
import { authenticateToken, parseTokenFile } from './token-file.js';

void describe('token file', () => {
  const table = parseTokenFile('# comment\nt1,alice,1,"dev,ops"\n\nt2,bob,2\n"t,3",carol,3,\n', 'tokens.csv');
  void it('parses users, uids and quoted groups', () => {
    assert.deepEqual(table.get('t1'), { token: 't1', name: 'alice', uid: '1', groups: ['dev', 'ops'] });
    assert.deepEqual(table.get('t2')?.groups, []);
    assert.equal(table.get('t,3')?.name, 'carol');
  });
  void it('authenticates bearer tokens', () => {
    assert.deepEqual(authenticateToken('Bearer t1', table), { kind: 'user', user: { name: 'alice', uid: '1', groups: ['dev', 'ops'] } });
    assert.equal(authenticateToken('Bearer nope', table).kind, 'invalid');
    assert.equal(authenticateToken('Basic dXNlcjpwYXNz', table).kind, 'invalid');
    assert.equal(authenticateToken('Bearer t1', undefined).kind, 'invalid');
  });
  void it('rejects short lines, empty fields, duplicates and open quotes, naming the line', () => {
    for (const [text, line] of [['a,b', 1], ['x,y,z\n,b,c', 2], ['a,,c', 1], ['a,b,c\na,d,e', 2], ['"a,b,c', 1]] as const) {
      assert.throws(() => parseTokenFile(text, 'f.csv'), (err: unknown) => isInvalid(err) && err instanceof Error && err.message.includes(`line ${line}:`), text);
    }
  });
});

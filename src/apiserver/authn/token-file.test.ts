import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid } from '../../api/errors.js';
import { authenticateToken, parseTokenFile, tokenEntry } from './token-file.js';

void describe('token file', () => {
  const table = parseTokenFile('# comment\nt1,alice,1,"dev,ops"\n\nt2,bob,2\n"t,3",carol,3,\n', 'tokens.csv');
  void it('parses users, uids and quoted groups', () => {
    assert.equal(table.size, 3);
    assert.deepEqual(tokenEntry(table, 't1'), { token: 't1', name: 'alice', uid: '1', groups: ['dev', 'ops'] });
    assert.deepEqual(tokenEntry(table, 't2')?.groups, []);
    assert.equal(tokenEntry(table, 't,3')?.name, 'carol');
    assert.equal(tokenEntry(table, 't'), undefined);
  });
  void it('authenticates bearer tokens', () => {
    assert.deepEqual(authenticateToken('Bearer t1', table), { kind: 'user', user: { name: 'alice', uid: '1', groups: ['dev', 'ops'] } });
    assert.equal(authenticateToken('Bearer nope', table).kind, 'invalid');
    assert.equal(authenticateToken('Basic dXNlcjpwYXNz', table).kind, 'invalid');
    assert.equal(authenticateToken('Bearer t1', undefined).kind, 'invalid');
  });
  void it('finds each of thousands of tokens, and none that differs in one character', () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `secret-${String(i).padStart(5, '0')},system:node:n${i},u${i},system:nodes`);
    const big = parseTokenFile(lines.join('\n'), 'nodes.csv');
    for (const i of [0, 1, 1499, 2999]) {
      const token = `secret-${String(i).padStart(5, '0')}`;
      assert.deepEqual(authenticateToken(`Bearer ${token}`, big), { kind: 'user', user: { name: `system:node:n${i}`, uid: `u${i}`, groups: ['system:nodes'] } });
      assert.equal(authenticateToken(`Bearer ${token}x`, big).kind, 'invalid');
      assert.equal(authenticateToken(`Bearer ${token.slice(0, -1)}`, big).kind, 'invalid');
    }
    assert.equal(authenticateToken('Bearer secret-03000', big).kind, 'invalid');
  });
  void it('rejects short lines, empty fields, duplicates and open quotes, naming the line', () => {
    for (const [text, line] of [['a,b', 1], ['x,y,z\n,b,c', 2], ['a,,c', 1], ['a,b,c\na,d,e', 2], ['"a,b,c', 1]] as const) {
      assert.throws(() => parseTokenFile(text, 'f.csv'), (err: unknown) => isInvalid(err) && err instanceof Error && err.message.includes(`line ${line}:`), text);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseConfigText } from './file.js';

const FILE = '/etc/nodeagent/config.yaml';

function messageOfParse(text: string): string {
  try {
    parseConfigText(text, FILE);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  assert.fail('expected the text to be refused');
}

void describe('configuration file limits', () => {
  void it('says where nesting is too deep instead of overflowing the stack', () => {
    for (const text of [`kind: ${'['.repeat(20_000)}${']'.repeat(20_000)}`, `${'- '.repeat(20_000)}x`, `{"a":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_001)}`]) {
      assert.match(messageOfParse(text), /^\/etc\/nodeagent\/config\.yaml: nesting too deep at line 1:\d+ \(more than 100 levels\)$/);
    }
  });

  void it('refuses an alias bomb and a text past the size limit', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${Array.from({ length: 10 }, () => (i === 0 ? '*a' : `*b${i - 1}`)).join(', ')}]`)];
    assert.match(messageOfParse(bomb.join('\n')), /aliases/);
    assert.match(messageOfParse(`kind: x\n#${'x'.repeat(5 * 1024 * 1024)}`), /is 5 MiB, larger than the limit of 4 MiB/);
  });

  void it('still reads an ordinary file and refuses a second document', () => {
    assert.deepEqual(parseConfigText('kind: NodeagentConfiguration\nport: 10250\n', FILE).value, { kind: 'NodeagentConfiguration', port: 10250 });
    assert.match(messageOfParse('kind: a\n---\nkind: b\n'), /more than one YAML document/);
  });
});

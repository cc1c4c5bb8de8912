import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getPath } from '../schema.js';
import { fieldAt } from '../schema.js';
import { configurationSchema } from '../types.js';
import { flagDefaults } from '../resolve.js';
import { resolveArgs, specText } from '../fixtures.js';
import { helpText } from './help.js';
import { FLAGS, defaultCommandLineOptions } from './table.js';

/** The spec's flag table (testdata/flags.txt): each flag's names (shorthand first) and deprecation. */
function specFlagRows(): { names: string[]; dep: string }[] {
  const rows: { names: string[]; dep: string }[] = [];
  for (const line of specText('flags.txt').split('\n')) {
    if (!line.startsWith('| -')) continue;
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length !== 4) continue; // | Flag | Dep |
    const names = (cells[1] ?? '').split(',').map((n) => n.trim().replace(/^-+/, ''));
    rows.push({ names, dep: cells[2] ?? '' });
  }
  return rows;
}

void describe('the flag table', () => {
  void it('has every flag of the specification, with its deprecation, and no other', () => {
    const rows = specFlagRows();
    assert.ok(rows.length > 100, `read only ${rows.length} rows of the spec's flag table`);
    const ours = new Map(FLAGS.map((f) => [f.name, f]));
    for (const row of rows) {
      const long = row.names[row.names.length - 1] ?? '';
      const spec = ours.get(long);
      assert.ok(spec !== undefined, `flag --${long} of the spec is missing`);
      if (row.names.length === 2) assert.equal(spec.short, row.names[0], `shorthand of --${long}`);
      assert.equal(spec.deprecation?.kind ?? '', row.dep, `deprecation of --${long}`);
    }
    assert.equal(FLAGS.length, rows.length);
  });

  void it('maps every field flag to a real configuration field', () => {
    for (const spec of FLAGS) {
      if ('field' in spec.target) assert.ok(fieldAt(configurationSchema, spec.target.field) !== undefined, `--${spec.name} -> ${spec.target.field}`);
    }
  });

  for (const spec of FLAGS.filter((f) => f.specDefault !== undefined)) {
    void it(`parses --${spec.name} with the spec's default to our default`, async () => {
      const r = await resolveArgs([`--${spec.name}=${spec.specDefault ?? ''}`]);
      const target = spec.target;
      if ('field' in target) {
        assert.deepEqual(
          getPath(r.config as unknown as Record<string, unknown>, target.field),
          getPath(flagDefaults() as unknown as Record<string, unknown>, target.field),
        );
      } else if ('option' in target) {
        assert.deepEqual(r.options[target.option], defaultCommandLineOptions()[target.option]);
      }
    });
  }

  void it('lists every flag in --help with its type, default and deprecation', () => {
    const help = helpText(() => 'DEF');
    for (const spec of FLAGS) {
      const line = help.split('\n').find((l) => l.includes(`--${spec.name} `) || l.endsWith(`--${spec.name}`) || l.includes(`--${spec.name}  `));
      assert.ok(line !== undefined, `--${spec.name} is not in --help`);
    }
    assert.match(help, /--port int32 +Server port \(default DEF\) \(DEPRECATED: set port in the file given by --config instead\)/);
    assert.match(help, /-v, --v Level/);
    assert.match(help, /QOSReserved=true\|false \(ALPHA - default=false\)/);
  });
});

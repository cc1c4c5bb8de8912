/**
 * Fuzz suite: configuration files (mutated texts of a valid file, fields given wrong values)
 * and flag sets (every flag of the table with plausible and odd values, unknown flags,
 * malformed arguments), resolved as the agent resolves them at start. Never anything but a
 * ConfigurationError (or an OrchError naming its subject); every problem names the flag, the
 * file or the field it concerns.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { isOrchError } from '../../api/errors.js';
import { fc, fuzzAsync, mutatedObject, mutatedText } from '../../api/testing-fuzz.js';
import { FLAGS } from './flags/table.js';
import { ConfigurationError, resolveConfiguration } from './resolve.js';

const HEADER = { apiVersion: 'nodeagent.config.orch.io/v1beta1', kind: 'NodeagentConfiguration' };
const VALID = {
  ...HEADER,
  address: '127.0.0.1', port: 10250, readOnlyPort: 0, staticPodPath: '/etc/orch/manifests', syncFrequency: '1m0s',
  authentication: { anonymous: { enabled: false }, webhook: { enabled: false, cacheTTL: '2m0s' }, x509: { clientCAFile: '' } },
  authorization: { mode: 'AlwaysAllow' },
  evictionHard: { 'memory.available': '100Mi' }, featureGates: { SidecarContainers: true },
  maxPods: 110, podPidsLimit: -1, cgroupDriver: 'cgroupfs', clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local',
  logging: { format: 'text', verbosity: 2 }, registerWithTaints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }],
};
const FIELD_VALUE: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ maxDepth: 2 }), fc.integer(), fc.constantFrom('', '-1', '1h', '1x', 'abc', '0.0.0.0', '::', 'a'.repeat(300), '1Gi', 'true', null),
);

const FLAG_VALUE = fc.oneof(
  fc.constantFrom('', '0', '1', '-1', 'true', 'false', 'yes', '1m', '90s', '1h2m', 'abc', 'a=b', 'a=b,c=d', 'memory.available<100Mi', 'k=v:NoSchedule',
    '0:memory=1Gi', '127.0.0.1', '::1', 'x'.repeat(300), '=', ',', ':', '/tmp', 'unix:///run/x.sock', 'a:b', '9999999999999', '1e9'),
  fc.string({ maxLength: 12 }),
);
const ARG = fc.oneof(
  fc.tuple(fc.constantFrom(...FLAGS.map((f) => f.name)), FLAG_VALUE, fc.boolean()).map(([name, value, separate]) => (separate ? [`--${name}`, value] : [`--${name}=${value}`])),
  fc.constantFrom(['--nope'], ['-x'], ['--'], ['-'], ['positional'], ['---v=2'], ['--v'], ['-v', 'x'], ['--help=maybe'], ['--version=raw']),
);

/** A problem names a flag (--x, -v), the configuration file, or a field of it. */
function namesSubject(problem: string, file: string): boolean {
  return /(^|\W)--?[a-zA-Z]/.test(problem) || problem.includes(file) || /^[a-zA-Z][\w.[\]"-]*:/.test(problem) || /^(unknown|invalid) (flag|shorthand)|takes no arguments, got "/.test(problem);
}

void describe('fuzz: configuration', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'config-fuzz-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function resolveWith(argv: readonly string[], file: string): Promise<void> {
    try {
      await resolveConfiguration({ argv, env: {}, cwd: dir, version: 'v0.1.0' });
    } catch (err) {
      if (err instanceof ConfigurationError) {
        for (const p of err.problems) {
          assert.ok(namesSubject(p, file), `the flag, file or field is named: ${p.slice(0, 300)}`);
          assert.ok(p.length < 2000, `a problem of ${p.length} characters: ${p.slice(0, 300)}`);
        }
        return;
      }
      assert.ok(isOrchError(err) && err.subject !== undefined, `not a configuration error: ${String(err)}`);
    }
  }

  void it('configuration files, mutated or with wrong values, resolve or are rejected naming the file and the field', async () => {
    const file = join(dir, 'config.yaml');
    const texts = fc.oneof(
      mutatedText([JSON.stringify(VALID, null, 2), `apiVersion: ${HEADER.apiVersion}\nkind: ${HEADER.kind}\nport: 10250\nevictionHard:\n  memory.available: 100Mi\n`]),
      mutatedObject(VALID, FIELD_VALUE).map((v) => { const t: unknown = JSON.stringify(v); return typeof t === 'string' ? t : 'null'; }),
    );
    await fuzzAsync('configuration files', texts, async (text) => {
      await writeFile(file, text);
      await resolveWith([`--config=${file}`], file);
    }, 400);
  });

  void it('flag sets resolve or are rejected naming the flag', async () => {
    await fuzzAsync('flag sets', fc.array(ARG, { maxLength: 6 }).map((args) => args.flat()), (argv) => resolveWith(argv, '\u0000'), 3000);
  });
});

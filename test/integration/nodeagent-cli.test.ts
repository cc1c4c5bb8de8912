/**
 * The nodeagent binary as users run it: --version, --help, config print, and the way it
 * reports invalid configurations (every problem at once, non-zero exit, nothing started).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { FLAGS } from '../../src/agent/config/index.js';
import { tempDirs } from '../helpers/tempdir.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../../../bin/nodeagent');

interface Run { code: number; stdout: string; stderr: string }

const tempDir = tempDirs('nodeagent-cli-');

function run(args: readonly string[], cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(BIN, args, { cwd, env: { ...process.env, NODEAGENT_CONFIG_DROPIN_DIR_ALPHA: '' } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

void describe('nodeagent command line', () => {
  void it('prints its version with --version and exits 0', async () => {
    const r = await run(['--version']);
    assert.deepEqual(r, { code: 0, stdout: 'nodeagent v0.1.0\n', stderr: '' });
  });

  void it('lists every flag in --help', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    for (const f of FLAGS) assert.ok(r.stdout.includes(`--${f.name}`), `--${f.name} missing from --help`);
    assert.match(r.stdout, /--max-pods int32 +Max pods \(default 110\) \(DEPRECATED: set maxPods in the file given by --config instead\)/);
    assert.match(r.stdout, /--eviction-hard mapStringString .*\(default imagefs\.available<15%,memory\.available<100Mi,nodefs\.available<10%,nodefs\.inodesFree<5%\)/);
  });

  void it('names an unknown flag and points to --help', async () => {
    const r = await run(['--no-such-flag']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown flag: --no-such-flag/);
    assert.match(r.stderr, /Run 'nodeagent --help' for the list of flags\./);
  });

  void it('prints the effective configuration, warning about deprecated flags', async () => {
    const r = await run(['config', 'print', '--output=json', '--max-pods=12', '--sync-frequency=90s']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(c.kind, 'NodeagentConfiguration');
    assert.equal(c.maxPods, 12);
    assert.equal(c.syncFrequency, '1m30s');
    assert.match(r.stderr, /^W Flag --max-pods has been deprecated, set maxPods in the file given by --config instead$/m);
  });

  void it('migrates deprecated flags to a file that gives the same configuration', async () => {
    const dir = await tempDir();
    const flags = ['--max-pods=12', '--eviction-hard=memory.available<300Mi', '--read-only-port=0', '--node-labels=a=b'];
    const printed = await run(['config', 'print', ...flags, '--show-source']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^maxPods: 12 # flag --max-pods$/m);
    assert.match(printed.stdout, /^# --node-labels=\{"a":"b"\} \(flag --node-labels\)$/m);
    await writeFile(join(dir, 'config.yaml'), printed.stdout);
    const again = await run(['config', 'print', '--config=config.yaml', '--node-labels=a=b'], dir);
    assert.equal(again.code, 0, again.stderr);
    const a = parse(again.stdout) as Record<string, unknown>;
    const b = parse(printed.stdout) as Record<string, unknown>;
    assert.deepEqual(a, b);
  });

  void it('reports every problem of an invalid configuration at once and exits 1', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'c.yaml'), 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\nimageGCHighThresholdPercent: 70\ncontainerLogMaxFiles: 1\n');
    const r = await run(['config', 'print', '--config', 'c.yaml', '--runonce', '--oom-score-adj=5000'], dir);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    assert.ok(lines.length >= 5, r.stderr);
    assert.match(r.stderr, /imageGCLowThresholdPercent: must be below imageGCHighThresholdPercent \(70\), got 80/);
    assert.match(r.stderr, /containerLogMaxFiles: must be 2 or more, got 1 \(set by config file .*c\.yaml\)/);
    assert.match(r.stderr, /runOnce: cannot be combined with enableServer/);
    assert.match(r.stderr, /oomScoreAdj: must be from -1000 to 1000, got 5000 \(set by flag --oom-score-adj\)/);
    assert.match(r.stderr, /authorization\.mode: Webhook authorization needs the API server/);
  });

  void it('refuses to start on an invalid configuration before doing anything', async () => {
    const dir = await tempDir();
    const lock = join(dir, 'lock');
    const r = await run(['--max-pods=-1', `--lock-file=${lock}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /maxPods: must not be negative/);
    await assert.rejects(import('node:fs/promises').then((fs) => fs.stat(lock)), /ENOENT/);
  });

  void it('validates the credential provider config file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'p.yaml'), 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: CredentialProviderConfig\nproviders: []\n');
    const r = await run(['config', 'print', '--image-credential-provider-config=p.yaml', '--image-credential-provider-bin-dir=/usr/lib/cp'], dir);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /providers: at least one provider is required/);
  });

  void it('rejects unknown subcommands', async () => {
    const r = await run(['config', 'show']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the config command has one subcommand: print/);
  });
});

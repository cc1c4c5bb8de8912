import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SECOND } from './schema.js';
import { DROPIN_ENV, fileDefaults, flagDefaults } from './resolve.js';
import { HEADER, problemsOf, resolveArgs, tempFiles } from './fixtures.js';

// A file start needs the API server for the file's default webhook authn/authz.
const API = '--orchconfig=/etc/nodeagent/orchconfig';

void describe('defaults', () => {
  void it('uses the flag defaults without --config', async () => {
    const r = await resolveArgs([]);
    assert.equal(r.action, 'run');
    assert.equal(r.config.readOnlyPort, 10255);
    assert.equal(r.config.authentication.anonymous.enabled, true);
    assert.equal(r.config.authentication.webhook.enabled, false);
    assert.equal(r.config.authorization.mode, 'AlwaysAllow');
    assert.deepEqual(r.config, flagDefaults());
    assert.equal(r.sources.size, 0);
  });

  void it('uses the file defaults with --config', async () => {
    const dir = await tempFiles({ 'c.yaml': HEADER });
    const r = await resolveArgs(['--config', 'c.yaml', API], { cwd: dir });
    assert.equal(r.config.readOnlyPort, 0);
    assert.equal(r.config.authentication.anonymous.enabled, false);
    assert.equal(r.config.authentication.webhook.enabled, true);
    assert.equal(r.config.authorization.mode, 'Webhook');
    assert.deepEqual(r.config, fileDefaults());
  });

  void it('replaces zero values of non-pointer fields by their defaults, as upstream decoding does', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}port: 0\nmaxPods: 0\nreadOnlyPort: 0\nenforceNodeAllocatable: []\nevictionHard: null\n` });
    const r = await resolveArgs([`--config=${join(dir, 'c.yaml')}`, API]);
    assert.equal(r.config.port, 10250);
    assert.equal(r.config.maxPods, 110);
    assert.equal(r.config.readOnlyPort, 0);
    assert.deepEqual(r.config.enforceNodeAllocatable, []);
    assert.equal(r.config.evictionHard['memory.available'], '100Mi');
  });
});

void describe('precedence: flags > drop-ins > file > defaults', () => {
  void it('lays drop-ins over the file in lexical order and flags over both', async () => {
    const dir = await tempFiles({
      'c.yaml': `${HEADER}maxPods: 10\nsyncFrequency: 30s\nhealthzPort: 1111\nevictionHard:\n  memory.available: 1Gi\nfeatureGates:\n  QOSReserved: true\n  NodeSwap: true\n`,
      'd/20-b.conf': `${HEADER}maxPods: 30\nevictionHard:\n  nodefs.available: 7%\n`,
      'd/10-a.conf': `${HEADER}maxPods: 20\nhealthzPort: 2222\n`,
      'd/.hidden.conf': `${HEADER}maxPods: 99\n`,
      'd/ignored.yaml': `${HEADER}maxPods: 98\n`,
    });
    const r = await resolveArgs(['--config=c.yaml', '--config-dir=d', API, '--healthz-port=3333', '--feature-gates=NodeSwap=false'], { cwd: dir });
    assert.equal(r.config.maxPods, 30);
    assert.equal(r.config.syncFrequency, 30 * SECOND);
    assert.equal(r.config.healthzPort, 3333);
    // Maps merge key by key across drop-ins.
    assert.deepEqual(r.config.evictionHard, { 'memory.available': '1Gi', 'nodefs.available': '7%' });
    // Feature gates merge entry by entry from the flag.
    assert.deepEqual(r.config.featureGates, { QOSReserved: true, NodeSwap: false });
    assert.equal(r.sources.get('maxPods'), `drop-in ${join(dir, 'd/20-b.conf')}`);
    assert.equal(r.sources.get('syncFrequency'), `config file ${join(dir, 'c.yaml')}`);
    assert.equal(r.sources.get('healthzPort'), 'flag --healthz-port');
  });

  void it('lets only flags actually given override the file', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}readOnlyPort: 0\nport: 10251\n` });
    const r = await resolveArgs(['--config=c.yaml', API, '--max-pods=5'], { cwd: dir });
    assert.equal(r.config.readOnlyPort, 0);
    assert.equal(r.config.port, 10251);
    assert.equal(r.config.maxPods, 5);
  });

  void it('reads the drop-in directory from the environment, the flag winning', async () => {
    const dir = await tempFiles({ 'e/a.conf': `${HEADER}maxPods: 7\n`, 'f/a.conf': `${HEADER}maxPods: 8\n` });
    const env = { [DROPIN_ENV]: join(dir, 'e') };
    assert.equal((await resolveArgs([], { env })).config.maxPods, 7);
    assert.equal((await resolveArgs([`--config-dir=${join(dir, 'f')}`], { env })).config.maxPods, 8);
  });

  void it('replaces a map given by a flag instead of merging it', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}systemReserved:\n  cpu: 100m\n` });
    const r = await resolveArgs(['--config=c.yaml', API, '--system-reserved=memory=1Gi'], { cwd: dir });
    assert.deepEqual(r.config.systemReserved, { memory: '1Gi' });
  });
});

void describe('files', () => {
  void it('reads JSON as well as YAML', async () => {
    const dir = await tempFiles({
      'c.json': JSON.stringify({ apiVersion: 'nodeagent.config.orch.io/v1beta1', kind: 'NodeagentConfiguration', maxPods: 42, authentication: { webhook: { enabled: false } }, authorization: { mode: 'AlwaysAllow' } }),
    });
    const r = await resolveArgs(['--config=c.json'], { cwd: dir });
    assert.equal(r.config.maxPods, 42);
  });

  void it('names the file and position of malformed YAML', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}maxPods: [1,\n  port: 3\n` });
    const problems = await problemsOf(['--config=c.yaml'], { cwd: dir });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', new RegExp(`^${join(dir, 'c.yaml')}:\\d+:\\d+: malformed YAML or JSON`));
  });

  void it('checks kind and apiVersion', async () => {
    const dir = await tempFiles({ 'c.yaml': 'apiVersion: v1\nkind: Pod\n' });
    const problems = await problemsOf(['--config=c.yaml', API], { cwd: dir });
    assert.ok(problems.some((p) => p.includes('apiVersion must be nodeagent.config.orch.io/v1beta1, got "v1"')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('kind must be NodeagentConfiguration, got "Pod"')));
  });

  void it('reports every wrongly typed field with its position, and unknown fields as warnings', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}maxPods: "ten"\nsyncFrequency: 1d\nfailSwapOn: yes\nmaxPod: 3\n` });
    const problems = await problemsOf(['--config=c.yaml', API], { cwd: dir });
    const file = join(dir, 'c.yaml');
    assert.ok(problems.some((p) => p.startsWith(`${file}:3:10: field maxPods: expected an integer, got string "ten"`)), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('field syncFrequency') && p.includes('"1d"')));
    assert.ok(problems.some((p) => p.includes('field failSwapOn: expected true or false')));
    const ok = await tempFiles({ 'c.yaml': `${HEADER}maxPod: 3\n` });
    const r = await resolveArgs(['--config=c.yaml', API], { cwd: ok });
    assert.ok(r.warnings.some((w) => w.includes('unknown field maxPod ignored (did you mean maxPods?')), r.warnings.join('\n'));
  });

  void it('names a missing file', async () => {
    const problems = await problemsOf(['--config=/nonexistent/c.yaml']);
    assert.deepEqual(problems, ['cannot read configuration file (--config) /nonexistent/c.yaml: no such file']);
  });

  void it('rejects a drop-in of another kind, naming it', async () => {
    const dir = await tempFiles({ 'd/a.conf': 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: Other\n' });
    const problems = await problemsOf(['--config-dir=d'], { cwd: dir });
    assert.ok(problems.some((p) => p.includes(join(dir, 'd/a.conf')) && p.includes('kind must be NodeagentConfiguration')));
  });
});

void describe('command line', () => {
  void it('warns about deprecated flags, naming the configuration field or the removal', async () => {
    const r = await resolveArgs(['--max-pods=3', '--cloud-provider=', '--pod-infra-container-image=x', '--max-pods=4']);
    assert.deepEqual(r.warnings, [
      'Flag --max-pods has been deprecated, set maxPods in the file given by --config instead',
      'Flag --cloud-provider has been deprecated, will be removed in 1.24 or later',
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.27',
    ]);
    assert.equal(r.config.maxPods, 4);
  });

  void it('does not warn for flags that are not deprecated', async () => {
    const r = await resolveArgs(['--container-runtime-endpoint=unix:///x.sock', '--root-dir=/r', '-v', '3', '--hostname-override=n1']);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.options.rootDir, '/r');
    assert.equal(r.config.logging.verbosity, 3);
  });

  void it('answers --help, --version and --version=vX.Y.Z', async () => {
    assert.equal((await resolveArgs(['-h'])).action, 'help');
    assert.equal((await resolveArgs(['--help'])).action, 'help');
    assert.equal((await resolveArgs(['--version'])).action, 'version');
    assert.equal((await resolveArgs(['--version=raw'])).action, 'version-raw');
    const r = await resolveArgs(['--version=v1.2.3']);
    assert.equal(r.action, 'run');
    assert.equal(r.version, 'v1.2.3');
    assert.equal((await resolveArgs(['--version=false'])).action, 'run');
    assert.ok((await problemsOf(['--version=banana']))[0]?.includes('expected true, false, raw or a version vX.Y.Z'));
  });

  void it('lists every problem at once: unknown flags, bad values, arguments, invalid fields', async () => {
    const problems = await problemsOf(['--bogus', '--port=x', 'extra', '--max-pods=-1', '--oom-score-adj=2000']);
    assert.deepEqual(problems, [
      'unknown flag: --bogus',
      'invalid value "x" for flag --port: expected an integer (int32)',
      'nodeagent takes no arguments, got "extra"',
      'maxPods: must not be negative, got -1 (set by flag --max-pods)',
      'oomScoreAdj: must be from -1000 to 1000, got 2000 (set by flag --oom-score-adj)',
    ]);
  });

  void it('validates the credential provider flags together', async () => {
    const problems = await problemsOf(['--image-credential-provider-config=/x.yaml']);
    assert.deepEqual(problems, ['--image-credential-provider-bin-dir: is required with --image-credential-provider-config']);
  });
});

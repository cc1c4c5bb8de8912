/**
 * The orch-apiserver command line: --help lists every flag with its default, --version, invalid
 * flags and unreadable or invalid files exit 1 with a message naming the flag, and a server with
 * an explicit --tls-cert-file writes an orchconfig that trusts it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ensureCa, ensureServing, FLAGS } from '../../src/apiserver/server/index.js';
import { VERSION } from '../../src/version.js';
import { freePort } from '../helpers/etcd.js';
import { waitFor } from '../helpers/wait.js';

const BINARY = fileURLToPath(new URL('../../../bin/orch-apiserver', import.meta.url));

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [BINARY, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

void describe('orch-apiserver command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-apiserver-cli-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  void it('prints every flag with its default on --help and -h', () => {
    const res = run('--help');
    assert.equal(res.status, 0, res.stderr);
    for (const flag of FLAGS) assert.match(res.stdout, new RegExp(`--${flag.name} `), flag.name);
    for (const def of ['"0.0.0.0"', '"6443"', '"/var/lib/orch-apiserver/pki"', '"sqlite"', '"/var/lib/orch-apiserver"', '"1h0m0s"', '"3145728"', '"AlwaysAllow"', '"5m0s"']) {
      assert.ok(res.stdout.includes(`(default ${def})`), `default ${def}`);
    }
    assert.match(res.stdout, /-h, --help/);
    assert.match(res.stdout, /--version/);
    assert.equal(run('-h').stdout, res.stdout);
  });

  void it('prints the version', () => {
    const res = run('--version');
    assert.equal(res.status, 0);
    assert.equal(res.stdout, `orch-apiserver ${VERSION}\n`);
  });

  void it('exits 1 with a message naming each invalid flag', () => {
    const cases: [string[], RegExp][] = [
      [['--secure-port=abc'], /invalid argument "abc" for --secure-port/],
      [['--secure-port', '70000'], /--secure-port 70000 must be between 1 and 65535/],
      [['--nope'], /unknown flag: --nope/],
      [['--event-ttl=soon'], /for --event-ttl/],
      [['--storage-backend=mysql'], /--storage-backend "mysql"/],
      [['--storage-backend=etcd3'], /--etcd-servers is required/],
      [['--authorization-mode=Policy'], /--authorization-policy-file is required/],
      [['--authorization-mode=RBAC'], /--authorization-mode "RBAC"/],
      [['--tls-cert-file=/x'], /--tls-cert-file and --tls-private-key-file must be given together/],
      [['--bind-address'], /flag needs an argument: --bind-address/],
      [['serve'], /unexpected argument "serve"/],
    ];
    for (const [args, message] of cases) {
      const res = run(...args);
      assert.equal(res.status, 1, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.match(res.stderr, /Run 'orch-apiserver --help'/);
    }
  });

  void it('exits 1 naming unreadable or invalid token and policy files', () => {
    const common = [`--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, '--bind-address=127.0.0.1'];
    const missing = run(...common, `--token-auth-file=${join(dir, 'missing.csv')}`);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /--token-auth-file: cannot read/);
    writeFileSync(join(dir, 'bad.csv'), 'tok,user,uid\nonly-two,cols\n');
    const bad = run(...common, `--token-auth-file=${join(dir, 'bad.csv')}`);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /line 2: want at least 3 columns/);
    writeFileSync(join(dir, 'policy.yaml'), '- verbs: [get]\n  resources: [events]\n  colour: blue\n');
    const policy = run(...common, '--authorization-mode=Policy', `--authorization-policy-file=${join(dir, 'policy.yaml')}`);
    assert.equal(policy.status, 1);
    assert.match(policy.stderr, /--authorization-policy-file .*rule 0: unknown field "colour"/);
  });

  void it('serves --tls-cert-file and writes an orchconfig that trusts it', async () => {
    const ca = await ensureCa(join(dir, 'other-ca'));
    const pair = await ensureServing(join(dir, 'other-ca'), ca, ['127.0.0.1']);
    writeFileSync(join(dir, 'tls.crt'), pair.certPem + ca.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
    const port = await freePort();
    const config = join(dir, 'tls.orchconfig');
    const child = spawn(process.execPath, [BINARY, '--bind-address=127.0.0.1', `--secure-port=${port}`, `--cert-dir=${join(dir, 'pki2')}`, `--data-dir=${join(dir, 'data2')}`,
      `--tls-cert-file=${join(dir, 'tls.crt')}`, `--tls-private-key-file=${join(dir, 'tls.key')}`, `--write-admin-orchconfig=${config}`], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor('the orchconfig', () => existsSync(config));
      const doc = parse(readFileSync(config, 'utf8')) as { clusters: { cluster: Record<string, string> }[]; users: { user: Record<string, string> }[] };
      const cluster = doc.clusters[0]?.cluster ?? {};
      const user = doc.users[0]?.user ?? {};
      const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');
      assert.equal(cluster.server, `https://127.0.0.1:${port}`);
      const status = await waitFor('the server to answer with the orchconfig credentials', () => new Promise<number | undefined>((resolve) => {
        const req = request(`${cluster.server ?? ''}/api/v1/namespaces`, { ca: b64(cluster['certificate-authority-data']), cert: b64(user['client-certificate-data']), key: b64(user['client-key-data']), agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on('error', () => {
          resolve(undefined);
        });
        req.end();
      }));
      assert.equal(status, 200);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

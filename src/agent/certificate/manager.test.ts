import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nodeTemplate } from './bootstrap.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { createTestCa, type TestCa } from './fakes.js';
import { createCertificateManager, type CertificateManager } from './manager.js';
import { certificateFacts, createCsrPem, generateKeyPem, type CertificatePair, type CertificateTemplate } from './pki.js';
import { MemoryStore } from './store.js';

const DAY = 24 * 3600_000;
let ca: TestCa;
const time0 = Date.parse('2030-01-01T00:00:00Z');

before(async () => {
  ca = await createTestCa();
});

/** A pair for `template` valid for `days` from `from`. */
async function pair(template: CertificateTemplate, from: number, days: number): Promise<CertificatePair> {
  const keyPem = generateKeyPem();
  const certPem = await ca.sign(await createCsrPem(keyPem, template), { notBefore: new Date(from), notAfter: new Date(from + days * DAY) });
  return { certPem, keyPem };
}

interface Env {
  time: FakeClock;
  store: MemoryStore;
  manager: CertificateManager;
  /** Templates asked for, in order. */
  asked: CertificateTemplate[];
  rotated: CertificatePair[];
  /** What the next requests give (shifted); an Error rejects. */
  answers: (CertificatePair | Error)[];
  template: { current: CertificateTemplate | undefined };
}

const envs: Env[] = [];
after(async () => {
  for (const e of envs) await e.manager.stop();
});

interface EnvOptions {
  readonly initial?: CertificatePair;
  /** null: no template yet. */
  readonly template?: CertificateTemplate | null;
  readonly random?: number;
  readonly templateCheckMs?: number;
}

function env(options: EnvOptions = {}): Env {
  const random = options.random ?? 0;
  const template = options.template === null ? undefined : options.template ?? nodeTemplate('n1');
  const initial = options.initial;
  const time = new FakeClock(time0);
  const store = new MemoryStore(initial);
  const e = { time, store, asked: [], rotated: [], answers: [], template: { current: template } } as unknown as Env;
  e.manager = createCertificateManager({
    name: 'test', store, logger: new FakeLogger(), clock: time, random: () => random,
    template: () => e.template.current,
    request: (t) => {
      e.asked.push(t);
      const next = e.answers.shift();
      if (next === undefined) return new Promise(() => undefined);
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    onRotated: (p) => e.rotated.push(p),
    ...(options.templateCheckMs === undefined ? {} : { templateCheckMs: options.templateCheckMs }),
  });
  envs.push(e);
  return e;
}

void describe('the certificate manager', () => {
  void it('requests at once without a certificate, then renews at 70 % (random 0) of the validity', async () => {
    const e = env();
    const first = await pair(nodeTemplate('n1'), time0, 10);
    const second = await pair(nodeTemplate('n1'), time0 + 7 * DAY, 10);
    e.answers.push(first, second);
    await e.manager.start();
    assert.equal(e.manager.current(), undefined);
    await e.time.advance(0);
    assert.equal(e.asked.length, 1);
    assert.equal(e.manager.current(), first);
    assert.deepEqual(e.rotated, [first]);
    assert.equal(e.manager.renewalDeadline()?.getTime(), time0 + 7 * DAY);
    await e.time.advance(7 * DAY - 1000);
    assert.equal(e.asked.length, 1, 'not before the deadline');
    await e.time.advance(1000);
    assert.equal(e.asked.length, 2);
    assert.equal(e.manager.current(), second);
    assert.equal(e.store.updates, 2);
  });

  void it('keeps a stored certificate until its deadline (90 % with random near 1)', async () => {
    const stored = await pair(nodeTemplate('n1'), time0, 10);
    const e = env({ initial: stored, random: 0.999999 });
    await e.manager.start();
    await e.time.advance(DAY);
    assert.equal(e.asked.length, 0);
    assert.equal(e.manager.current(), stored);
    const deadline = e.manager.renewalDeadline()?.getTime() ?? 0;
    assert.ok(deadline > time0 + 8.99 * DAY && deadline < time0 + 9 * DAY, new Date(deadline).toISOString());
  });

  void it('backs off after failures: 2 s, 4 s, 8 s', async () => {
    const e = env();
    e.answers.push(new Error('no server'), new Error('no server'), new Error('no server'));
    await e.manager.start();
    await e.time.advance(0);
    assert.equal(e.asked.length, 1);
    await e.time.advance(1999);
    assert.equal(e.asked.length, 1);
    await e.time.advance(1);
    assert.equal(e.asked.length, 2);
    await e.time.advance(4000);
    assert.equal(e.asked.length, 3);
    await e.time.advance(7999);
    assert.equal(e.asked.length, 3);
    e.answers.push(await pair(nodeTemplate('n1'), time0, 10));
    await e.time.advance(1);
    assert.equal(e.asked.length, 4);
    assert.notEqual(e.manager.current(), undefined);
  });

  void it('asks nothing without a template, and renews at once when the template changes', async () => {
    const e = env({ template: null, templateCheckMs: 1000 });
    await e.manager.start();
    await e.time.advance(10_000);
    assert.equal(e.asked.length, 0);
    const t1 = nodeTemplate('n1', ['n1'], ['10.0.0.1']);
    e.template.current = t1;
    e.answers.push(await pair(t1, time0, 10));
    await e.time.advance(1000);
    assert.deepEqual(e.asked, [t1]);
    await e.time.advance(60_000);
    assert.equal(e.asked.length, 1, 'the certificate satisfies the template');
    const t2 = nodeTemplate('n1', ['n1'], ['10.0.0.2']);
    e.template.current = t2;
    const p2 = await pair(t2, time0, 10);
    e.answers.push(p2);
    await e.time.advance(1000);
    assert.deepEqual(e.asked, [t1, t2]);
    assert.deepEqual(certificateFacts(e.manager.current()?.certPem ?? '').ipAddresses, ['10.0.0.2']);
  });

  void it('treats an expired certificate as none, and stops cleanly while a request waits', async () => {
    const expired = await pair(nodeTemplate('n1'), time0 - 20 * DAY, 10);
    const e = env({ initial: expired });
    await e.manager.start();
    assert.equal(e.manager.current(), undefined);
    await e.time.advance(0);
    assert.equal(e.asked.length, 1, 'renewal starts at once');
    await e.manager.stop();
    await e.manager.stop();
    assert.equal(e.time.pending().length, 0);
  });
});

/**
 * Test helpers of the certificate module (imported by its tests only): a capturing logger, a
 * small CA that signs PEM requests, a FakeCsrApi (a RestClient holding CertificateSigningRequests
 * in memory, with approve/deny/issue and an optional automatic signer). Time: src/api/fake-clock.ts.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { ObjectList, RestClient, WatchEvent, WatchHandle } from '../orchclient/rest-types.js';
import { x509 } from './pki.js';

type Obj = Record<string, unknown>;

export class FakeLogger implements Logger {
  readonly lines: string[] = [];
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void {
    this.lines.push(`I ${msg} ${JSON.stringify(fields ?? {})}`);
  }
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void {
    this.lines.push(`W ${msg} ${JSON.stringify(fields ?? {})}`);
  }
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void {
    this.lines.push(`E ${msg} ${JSON.stringify(fields ?? {})}`);
  }
  enabled(): boolean {
    return true;
  }
  v(_level: number, msg: string, fields?: Readonly<Record<string, unknown>>): void {
    this.info(msg, fields);
  }
  named(): Logger {
    return this;
  }
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export interface TestCa {
  readonly certPem: string;
  /** A certificate for the request's subject, public key and SANs. */
  sign(csrPem: string, validity?: { notBefore?: Date; notAfter?: Date }): Promise<string>;
}

export async function createTestCa(): Promise<TestCa> {
  const lib = await x509();
  const keys = await webcrypto.subtle.generateKey(ALG, false, ['sign', 'verify']);
  const ca = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01', name: 'CN=test-ca', keys, signingAlgorithm: ALG,
    notBefore: new Date(Date.now() - 3600_000), notAfter: new Date(Date.now() + 10 * 365 * 24 * 3600_000),
    extensions: [new lib.BasicConstraintsExtension(true, undefined, true)],
  });
  return {
    certPem: `${ca.toString('pem')}\n`,
    async sign(csrPem, validity = {}) {
      const csr = new lib.Pkcs10CertificateRequest(csrPem);
      const san = csr.getExtension('2.5.29.17');
      const notBefore = validity.notBefore ?? new Date(Date.now() - 60_000);
      const cert = await lib.X509CertificateGenerator.create({
        serialNumber: randomBytes(8).toString('hex').replace(/^[89a-f]/, '1'),
        subject: csr.subjectName, issuer: ca.subjectName, publicKey: csr.publicKey, signingKey: keys.privateKey, signingAlgorithm: ALG,
        notBefore, notAfter: validity.notAfter ?? new Date(notBefore.getTime() + 24 * 3600_000),
        extensions: san === null ? [] : [san],
      });
      return `${cert.toString('pem')}\n`;
    },
  };
}

/** CertificateSigningRequests in memory behind the RestClient interface. */
export class FakeCsrApi implements RestClient {
  readonly csrs = new Map<string, Obj>();
  readonly created: string[] = [];
  closed = 0;
  private readonly watchers = new Set<(e: WatchEvent) => void>();
  private counter = 0;
  /** When set, every new request is approved and signed by it. */
  autoSign: TestCa | undefined;
  /** When true, watches open but never deliver events (a broken watch: only polling sees changes). */
  silentWatch = false;

  get<T>(path: string): Promise<T> {
    const csr = this.csrs.get(path.split('/').pop() ?? '');
    if (csr === undefined) return Promise.reject(new OrchError('ORCHCLIENT_REQUEST_FAILED', 'not-found', `${path} not found`));
    return Promise.resolve(structuredClone(csr) as T);
  }
  list<T>(): Promise<ObjectList<T>> {
    return Promise.resolve({ items: [...this.csrs.values()] as T[] });
  }
  async create<T>(_path: string, body: unknown): Promise<T> {
    const csr = structuredClone(body) as Obj;
    const meta = csr.metadata as Obj;
    const name = typeof meta.name === 'string' ? meta.name : `${String(meta.generateName)}${++this.counter}`;
    if (this.csrs.has(name)) throw new OrchError('ORCHCLIENT_REQUEST_FAILED', 'already-exists', `${name} already exists`);
    csr.metadata = { ...meta, name };
    this.csrs.set(name, csr);
    this.created.push(name);
    this.emit('ADDED', csr);
    if (this.autoSign !== undefined) await this.issue(name, this.autoSign);
    return structuredClone(csr) as T;
  }
  update<T>(): Promise<T> {
    return Promise.reject(new Error('unused'));
  }
  patch<T>(): Promise<T> {
    return Promise.reject(new Error('unused'));
  }
  delete<T>(path: string): Promise<T> {
    this.csrs.delete(path.split('/').pop() ?? '');
    return Promise.resolve({} as T);
  }
  watch<T>(_path: string, onEvent: (event: WatchEvent<T>) => void): WatchHandle {
    const listener = onEvent as (e: WatchEvent) => void;
    if (!this.silentWatch) this.watchers.add(listener);
    let end: (v: { reason: 'stopped' }) => void = () => undefined;
    const done = new Promise<{ reason: 'stopped' }>((resolve) => {
      end = resolve;
    });
    return {
      done,
      stop: () => {
        this.watchers.delete(listener);
        end({ reason: 'stopped' });
      },
    };
  }
  close(): void {
    this.closed++;
  }
  /** Number of open watches. */
  get watching(): number {
    return this.watchers.size;
  }

  request(name: string): string {
    const spec = this.csrs.get(name)?.spec as Obj | undefined;
    return Buffer.from(String(spec?.request), 'base64').toString('utf8');
  }
  condition(name: string, type: 'Approved' | 'Denied' | 'Failed', reason = `Test${type}`): void {
    const csr = this.csrs.get(name);
    if (csr === undefined) throw new Error(`no csr ${name}`);
    const status = (csr.status ?? {}) as Obj;
    csr.status = { ...status, conditions: [...((status.conditions as Obj[] | undefined) ?? []), { type, status: 'True', reason, message: `${type} by the test` }] };
    this.emit('MODIFIED', csr);
  }
  async issue(name: string, ca: TestCa, validity?: { notBefore?: Date; notAfter?: Date }): Promise<void> {
    this.condition(name, 'Approved');
    const pem = await ca.sign(this.request(name), validity);
    const csr = this.csrs.get(name) as Obj;
    csr.status = { ...(csr.status as Obj), certificate: Buffer.from(pem).toString('base64') };
    this.emit('MODIFIED', csr);
  }
  private emit(type: 'ADDED' | 'MODIFIED', csr: Obj): void {
    for (const w of this.watchers) w({ type, object: structuredClone(csr) });
  }
}

/**
 * Test helpers of the certificate module (imported by its tests only): a small CA that signs PEM
 * requests, a FakeCsrApi (the shared FakeRestClient holding CertificateSigningRequests, with
 * approve/deny/issue and an optional automatic signer). Time: src/api/fake-clock.ts.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import type { RestCallOptions } from '../orchclient/index.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { CSR_PATH } from './csr.js';
import { x509 } from './pki.js';

type Obj = Record<string, unknown>;

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

/**
 * The API server holding CertificateSigningRequests (the shared FakeRestClient), with what an
 * approver and a signer do to them: conditions, an issued certificate, and an optional
 * automatic signer.
 */
export class FakeCsrApi extends FakeRestClient {
  /** Names of the requests created, in order. */
  readonly created: string[] = [];
  /** When set, every new request is approved and signed by it. */
  autoSign: TestCa | undefined;

  /** The requests by name. */
  get csrs(): Map<string, Obj> {
    const prefix = `${CSR_PATH}/`;
    return new Map([...this.objects].filter(([path]) => path.startsWith(prefix)).map(([path, csr]) => [path.slice(prefix.length), csr]));
  }

  override async create<T>(path: string, body: unknown, options?: RestCallOptions): Promise<T> {
    const csr = await super.create<Obj>(path, body, options);
    const name = String((csr.metadata as Obj).name);
    this.created.push(name);
    if (this.autoSign !== undefined) await this.issue(name, this.autoSign);
    return csr as T;
  }

  request(name: string): string {
    const spec = this.csrs.get(name)?.spec as Obj | undefined;
    return Buffer.from(String(spec?.request), 'base64').toString('utf8');
  }

  condition(name: string, type: 'Approved' | 'Denied' | 'Failed', reason = `Test${type}`): void {
    const csr = this.csrs.get(name);
    if (csr === undefined) throw new Error(`no csr ${name}`);
    const status = (csr.status ?? {}) as Obj;
    const conditions = [...((status.conditions as Obj[] | undefined) ?? []), { type, status: 'True', reason, message: `${type} by the test` }];
    this.put(`${CSR_PATH}/${name}`, { ...csr, status: { ...status, conditions } });
  }

  async issue(name: string, ca: TestCa, validity?: { notBefore?: Date; notAfter?: Date }): Promise<void> {
    this.condition(name, 'Approved');
    const pem = await ca.sign(this.request(name), validity);
    const csr = this.csrs.get(name) as Obj;
    this.put(`${CSR_PATH}/${name}`, { ...csr, status: { ...(csr.status as Obj), certificate: Buffer.from(pem).toString('base64') } });
  }
}

/** The admin orchconfig (kubeconfig format) that --write-admin-orchconfig writes. */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { OrchError } from '../../api/errors.js';
import type { KeyPair } from './pki.js';

export interface AdminConfig {
  readonly server: string;
  /** PEM of the CA(s) the client trusts for the serving certificate. */
  readonly caPem: string;
  readonly client: KeyPair;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export function renderKubeconfig(config: AdminConfig): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster: { 'certificate-authority-data': b64(config.caPem), server: config.server } }],
    users: [{ name: 'admin', user: { 'client-certificate-data': b64(config.client.certPem), 'client-key-data': b64(config.client.keyPem) } }],
    contexts: [{ name: 'admin@orch', context: { cluster: 'orch', user: 'admin' } }],
    'current-context': 'admin@orch',
    preferences: {},
  });
}

/** Writes the file (mode 0600), creating its directory. Throws OrchError APISERVER_ORCHCONFIG. */
export function writeKubeconfig(path: string, config: AdminConfig): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, renderKubeconfig(config), { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (err) {
    throw new OrchError('APISERVER_ORCHCONFIG', 'unavailable', `--write-admin-orchconfig: cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`, { subject: path, cause: err });
  }
}

/** The URL clients on this host use: 127.0.0.1 unless the server listens on one other address. */
export function localServerUrl(bindAddress: string, port: number): string {
  if (['0.0.0.0', '::', '127.0.0.1', ''].includes(bindAddress)) return `https://127.0.0.1:${port}`;
  return bindAddress.includes(':') ? `https://[${bindAddress}]:${port}` : `https://${bindAddress}:${port}`;
}

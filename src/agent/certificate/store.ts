/**
 * Where certificates live in --cert-dir, as upstream's file store keeps them: each pair
 * (certificate chain, then key, one PEM file, mode 0600) is written as
 * `<prefix>-<YYYY-MM-DD-HH-MM-SS>.pem` (UTC), and `<prefix>-current.pem` is a symbolic link
 * to the newest one, swung atomically (a new link `<prefix>-updated.pem` renamed over it).
 * Old pairs are kept. Readers (the --orchconfig file, the agent's server) open the link.
 */
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { CERT_STORE_INVALID } from './codes.js';
import { splitPem, type CertificatePair } from './pki.js';

/** Holds the current pair of one kind (client or serving). */
export interface CertificateStore {
  /** The absolute path of the current pair's link (it may not exist yet). */
  readonly currentPath: string;
  /** The current pair; undefined when there is none. Throws CERT_STORE_INVALID when it is unreadable or has no key. */
  current(): Promise<CertificatePair | undefined>;
  /** Writes a new pair and makes it current; returns the pair as stored. Throws CERT_STORE_INVALID. */
  update(pair: CertificatePair): Promise<CertificatePair>;
}

export interface FileStoreOptions {
  readonly dir: string;
  /** e.g. nodeagent-client, nodeagent-server. */
  readonly prefix: string;
  /** The time in the names of the stored files. */
  readonly clock: Clock;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** Upstream's file-name timestamp (Go layout 2006-01-02-15-04-05), in UTC. */
export function fileTimestamp(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}-${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}`;
}

function storeError(path: string, message: string, cause?: unknown): OrchError {
  return new OrchError(CERT_STORE_INVALID, 'invalid', `${path}: ${message}`, { subject: path, cause });
}

/** Writes `text` to `path` through a temporary file and a rename (mode 0600). */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export function createFileStore(options: FileStoreOptions): CertificateStore {
  const dir = resolve(options.dir);
  const currentPath = join(dir, `${options.prefix}-current.pem`);
  return {
    currentPath,
    async current() {
      let text: string;
      try {
        text = await readFile(currentPath, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw storeError(currentPath, `cannot read it: ${messageOf(err)}`, err);
      }
      const { certPem, keyPem } = splitPem(text);
      if (certPem === '' || keyPem === undefined) throw storeError(currentPath, 'does not hold a PEM certificate and its private key');
      return { certPem, keyPem };
    },
    async update(pair) {
      const file = join(dir, `${options.prefix}-${fileTimestamp(new Date(options.clock.now()))}.pem`);
      const link = join(dir, `${options.prefix}-updated.pem`);
      const certPem = pair.certPem.endsWith('\n') ? pair.certPem : `${pair.certPem}\n`;
      const keyPem = pair.keyPem.endsWith('\n') ? pair.keyPem : `${pair.keyPem}\n`;
      try {
        await mkdir(dir, { recursive: true, mode: 0o755 });
        await writeFileAtomic(file, certPem + keyPem);
        await rm(link, { force: true });
        // Relative target: the directory may be moved or mounted elsewhere.
        await symlink(basename(file), link);
        await rename(link, currentPath);
      } catch (err) {
        throw storeError(file, `cannot store the certificate and key: ${messageOf(err)}`, err);
      }
      return { certPem, keyPem };
    },
  };
}

/** A store in memory (tests, and callers that keep pairs elsewhere). */
export class MemoryStore implements CertificateStore {
  readonly currentPath = '/memory/current.pem';
  pair: CertificatePair | undefined;
  updates = 0;

  constructor(pair?: CertificatePair) {
    this.pair = pair;
  }

  current(): Promise<CertificatePair | undefined> {
    return Promise.resolve(this.pair);
  }

  update(pair: CertificatePair): Promise<CertificatePair> {
    this.pair = pair;
    this.updates++;
    return Promise.resolve(pair);
  }
}

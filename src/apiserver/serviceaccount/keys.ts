/**
 * The keys of service account tokens (kube-apiserver's --service-account-signing-key-file and
 * --service-account-key-file): one private key signs, every key of the key files (public or
 * private PEM blocks, RSA or ECDSA) and the signing key's own public half verify. Without a
 * signing key file, an ECDSA P-256 key is made once in the data directory
 * (`service-account.key`, mode 0600) and kept there, so that tokens outlive a restart. The JWS
 * algorithm follows the key (RSA: RS256; ECDSA P-256/384/521: ES256/384/512) and the key ID is
 * the base64url SHA-256 of the public key's DER form, as upstream.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { OrchError, messageOf } from '../../api/errors.js';

/** A key file of the flags cannot be read or holds no usable key. */
export const APISERVER_SERVICE_ACCOUNT_KEY_INVALID = 'APISERVER_SERVICE_ACCOUNT_KEY_INVALID';

/** The file the generated signing key is kept in, under --data-dir. */
export const GENERATED_KEY_FILE = 'service-account.key';

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface VerifyingKey {
  readonly kid: string;
  readonly key: KeyObject;
  readonly alg: SigningAlgorithm;
}

export interface ServiceAccountKeys {
  readonly signing: { readonly kid: string; readonly key: KeyObject; readonly alg: SigningAlgorithm };
  readonly verifying: readonly VerifyingKey[];
}

export interface KeyFiles {
  /** --service-account-signing-key-file ('' for the generated key). */
  readonly signingKeyFile: string;
  /** --service-account-key-file, each file one or more PEM blocks. */
  readonly keyFiles: readonly string[];
  /** --data-dir: where the generated key is kept. */
  readonly dataDir: string;
}

function invalid(message: string, subject: string, cause?: unknown): OrchError {
  return new OrchError(APISERVER_SERVICE_ACCOUNT_KEY_INVALID, 'invalid', message, { subject, ...(cause === undefined ? {} : { cause }) });
}

/** The JWS algorithm of a key (RSA: RS256, ECDSA by curve). Throws for other key types. */
export function algorithmOf(key: KeyObject, subject: string): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1' || curve === 'P-256') return 'ES256';
    if (curve === 'secp384r1' || curve === 'P-384') return 'ES384';
    if (curve === 'secp521r1' || curve === 'P-521') return 'ES512';
    throw invalid(`${subject}: the ECDSA curve ${curve ?? '(unknown)'} is not supported (P-256, P-384, P-521)`, subject);
  }
  throw invalid(`${subject}: a ${key.asymmetricKeyType ?? 'secret'} key cannot sign service account tokens (RSA or ECDSA only)`, subject);
}

/** Upstream's key ID: the base64url SHA-256 of the public key in DER (SubjectPublicKeyInfo). */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The public keys of every PEM block of a key file (private blocks give their public half). */
export function publicKeysOfPem(text: string, subject: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const block of text.match(PEM_BLOCK) ?? []) {
    if (block.includes('CERTIFICATE')) continue;
    try {
      keys.push(createPublicKey(block));
    } catch (err) {
      throw invalid(`${subject}: a PEM block cannot be read as a key: ${messageOf(err)}`, subject, err);
    }
  }
  if (keys.length === 0) throw invalid(`${subject}: no PEM-encoded public or private key in the file`, subject);
  return keys;
}

function readText(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw invalid(`${flag}: cannot read ${file}: ${messageOf(err)}`, flag, err);
  }
}

/** The signing key of the file, or the generated one of the data directory (made on first use). */
function signingKey(files: KeyFiles): KeyObject {
  if (files.signingKeyFile !== '') {
    try {
      return createPrivateKey(readText(files.signingKeyFile, '--service-account-signing-key-file'));
    } catch (err) {
      if (err instanceof OrchError) throw err;
      throw invalid(`--service-account-signing-key-file ${files.signingKeyFile}: not a PEM private key: ${messageOf(err)}`, '--service-account-signing-key-file', err);
    }
  }
  const file = path.join(files.dataDir, GENERATED_KEY_FILE);
  if (existsSync(file)) return createPrivateKey(readText(file, '--data-dir'));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  mkdirSync(files.dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  return privateKey;
}

/** Loads (or makes) the keys. Throws APISERVER_SERVICE_ACCOUNT_KEY_INVALID naming the flag and the file. */
export function loadServiceAccountKeys(files: KeyFiles): ServiceAccountKeys {
  const key = signingKey(files);
  const subject = files.signingKeyFile === '' ? path.join(files.dataDir, GENERATED_KEY_FILE) : files.signingKeyFile;
  const publicKey = createPublicKey(key);
  const signing = { key, kid: keyId(publicKey), alg: algorithmOf(key, subject) };
  const verifying = new Map<string, VerifyingKey>([[signing.kid, { kid: signing.kid, key: publicKey, alg: signing.alg }]]);
  for (const file of files.keyFiles) {
    for (const k of publicKeysOfPem(readText(file, '--service-account-key-file'), file)) {
      const kid = keyId(k);
      verifying.set(kid, { kid, key: k, alg: algorithmOf(k, file) });
    }
  }
  return { signing, verifying: [...verifying.values()] };
}

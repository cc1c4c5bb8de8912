/**
 * The X.509 library (@peculiar/x509) with Node's WebCrypto as its provider, loaded once on first
 * use: it is slow to load, so commands that never touch certificates (--help, standalone agents
 * with certificates from files) do not pay for it. Both binaries use this one loader.
 */
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

let loaded: Promise<typeof X509> | undefined;

export function x509Library(): Promise<typeof X509> {
  loaded ??= (async () => {
    await import('reflect-metadata');
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    return lib;
  })();
  return loaded;
}

/**
 * The secure server's certificate when it is requested from the API server (serverTLSBootstrap,
 * upstream's GetCertificate on the serving certificate manager): the server starts without a
 * certificate and presents the source's current pair, merged with the configured TLS settings
 * (minimum version, cipher suites, client CA). The secure context is built once per pair and
 * rebuilt after a rotation. Clients that send SNI get it through the SNICallback; clients that
 * do not (connections to an IP address) get the server's default context, which is replaced
 * before the handshake of each new connection whenever the pair changed. Without a pair every
 * handshake fails ("no serving certificate available for the nodeagent", as upstream).
 */
import { createSecureContext, type SecureContext, type Server as TlsServer, type TlsOptions } from 'node:tls';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';

export const SERVER_NO_SERVING_CERTIFICATE = 'SERVER_NO_SERVING_CERTIFICATE';
export const NO_SERVING_CERTIFICATE = 'no serving certificate available for the nodeagent';

export interface ServingPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Where the serving certificate comes from (the serving certificate manager, in the agent). */
export interface ServingCertificateSource {
  /** The pair to present now; undefined: none yet (or it expired). Never blocks. */
  current(): ServingPair | undefined;
  /** Calls `listener` after each rotation; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** A source that never has a certificate (serverTLSBootstrap without an API server). */
export const noServingCertificate: ServingCertificateSource = { current: () => undefined, onChange: () => () => undefined };

export interface DynamicServingOptions {
  readonly source: ServingCertificateSource;
  /** The TLS settings without cert and key (tlsServerOptions without a serving pair). */
  readonly settings: TlsOptions;
  readonly logger: Logger;
}

export interface DynamicServing {
  /** Options for https.createServer: the settings, the current pair when there is one, and the SNICallback. */
  serverOptions(): TlsOptions;
  /** The secure context of the current pair (cached per pair); undefined when there is none. */
  context(): SecureContext | undefined;
  /** Keeps `server`'s default context on the current pair (for clients without SNI); returns the detach function. */
  attach(server: TlsServer): () => void;
  /** The error a handshake fails with when there is no pair. */
  missing(): OrchError;
}

export function createDynamicServing(o: DynamicServingOptions): DynamicServing {
  const log = o.logger;
  let cached: { readonly certPem: string; readonly context: SecureContext } | undefined;
  let broken: string | undefined;
  // The pair the server's default context holds ('' : none).
  let installed = '';

  const missing = (): OrchError => new OrchError(SERVER_NO_SERVING_CERTIFICATE, 'unavailable', NO_SERVING_CERTIFICATE, { subject: 'serverTLSBootstrap' });
  const withPair = (pair: ServingPair): TlsOptions => ({ ...o.settings, cert: pair.certPem, key: pair.keyPem });

  const context = (): SecureContext | undefined => {
    const pair = o.source.current();
    if (pair === undefined) return undefined;
    if (cached?.certPem === pair.certPem) return cached.context;
    try {
      cached = { certPem: pair.certPem, context: createSecureContext(withPair(pair)) };
      broken = undefined;
      log.v(2, 'Built the secure context of the serving certificate');
      return cached.context;
    } catch (err) {
      // Logged once per pair; the handshake fails as when there is no certificate.
      if (broken !== pair.certPem) log.error('The serving certificate cannot be used', { err: messageOf(err) });
      broken = pair.certPem;
      return undefined;
    }
  };

  /** The current pair when its context can be built. */
  const usable = (): ServingPair | undefined => (context() === undefined ? undefined : o.source.current());

  const sniCallback = (_servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    const ctx = context();
    if (ctx === undefined) cb(missing());
    else cb(null, ctx);
  };

  return {
    serverOptions() {
      const pair = usable();
      installed = pair?.certPem ?? '';
      return { ...(pair === undefined ? o.settings : withPair(pair)), SNICallback: sniCallback };
    },
    context,
    missing,
    attach(server) {
      const refresh = (): void => {
        const pair = usable();
        const pem = pair?.certPem ?? '';
        if (pem === installed) return;
        try {
          server.setSecureContext(pair === undefined ? o.settings : withPair(pair));
          installed = pem;
          log.info(pair === undefined ? 'The secure server has no serving certificate' : 'The secure server presents a new serving certificate');
        } catch (err) {
          log.error('Cannot replace the secure server\'s default TLS context', { err: messageOf(err) });
        }
      };
      // Before the TLS connection listener of the server: the new socket takes the default context.
      server.prependListener('connection', refresh);
      const unsubscribe = o.source.onChange(refresh);
      return () => {
        unsubscribe();
        server.off('connection', refresh);
      };
    },
  };
}

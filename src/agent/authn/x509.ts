/**
 * Client-certificate authentication. The TLS layer verifies the chain against the client CA
 * bundle (requestCert without rejecting, so that requests without a certificate still reach
 * the other authenticators); this reads the verdict once per connection: a verified
 * certificate is the user of its CommonName with its Organizations as groups (as upstream);
 * a certificate that does not verify is an error (401), never a fallback to anonymous.
 */
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type PeerCertificate } from 'node:tls';
import type { AuthnOutcome, RequestAuthenticator } from './types.js';

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

function describe(cert: PeerCertificate): string {
  const cn = values(cert.subject.CN)[0] ?? '';
  return `"${cn}" (serial ${cert.serialNumber})`;
}

/** The outcome for one TLS connection (exported for tests). */
export function certificateOutcome(socket: TLSSocket): AuthnOutcome {
  const cert = socket.getPeerCertificate();
  if (Object.keys(cert).length === 0) return { kind: 'none' };
  if (!socket.authorized) {
    const why = socket.authorizationError instanceof Error ? socket.authorizationError.message : String(socket.authorizationError);
    return { kind: 'error', reason: `verifying certificate ${describe(cert)} failed: ${why}` };
  }
  const name = values(cert.subject.CN)[0] ?? '';
  if (name === '') return { kind: 'error', reason: `certificate ${describe(cert)} has no CommonName` };
  return { kind: 'user', method: 'x509', user: { name, uid: '', groups: values(cert.subject.O), extra: {} } };
}

/** Client certificates of TLS connections; plain connections carry none. */
export function createX509Authenticator(): RequestAuthenticator {
  const byConnection = new WeakMap<TLSSocket, AuthnOutcome>();
  return {
    authenticate(req: IncomingMessage): Promise<AuthnOutcome> {
      const socket = req.socket;
      if (!(socket instanceof TLSSocket)) return Promise.resolve({ kind: 'none' });
      let outcome = byConnection.get(socket);
      if (outcome === undefined) {
        outcome = certificateOutcome(socket);
        byConnection.set(socket, outcome);
      }
      return Promise.resolve(outcome);
    },
  };
}

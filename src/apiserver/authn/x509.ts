/**
 * Client certificates: the TLS server asks for one and verifies it against the client CAs
 * (--client-ca-file plus the server's own CA); here the verified certificate becomes a user
 * (subject CN) with groups (every subject O). A certificate that did not verify, or whose
 * extended key usage excludes client authentication, is invalid credentials.
 *
 * The result is kept per connection (a keep-alive connection carries many requests, and reading
 * the peer certificate builds a new object each time) and dropped when the connection closes.
 */
import type { TLSSocket } from 'node:tls';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

export type CertResult =
  | { kind: 'none' }
  | { kind: 'user'; user: { name: string; uid: string; groups: readonly string[] } }
  | { kind: 'invalid'; reason: string };

function values(field: string | string[] | undefined): string[] {
  if (field === undefined) return [];
  return Array.isArray(field) ? field : [field];
}

export function authenticateCertificate(socket: Partial<TLSSocket>): CertResult {
  if (typeof socket.getPeerCertificate !== 'function') return { kind: 'none' };
  const cert = socket.getPeerCertificate();
  if (Object.keys(cert).length === 0) return { kind: 'none' };
  if (!socket.authorized) {
    const why = socket.authorizationError instanceof Error ? socket.authorizationError.message : String(socket.authorizationError);
    return { kind: 'invalid', reason: `the client certificate did not verify: ${why}` };
  }
  const usages = cert.ext_key_usage;
  if (usages !== undefined && !usages.includes(CLIENT_AUTH)) {
    return { kind: 'invalid', reason: 'the client certificate is not for client authentication' };
  }
  const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
  const name = values(subject.CN)[0] ?? '';
  if (name === '') return { kind: 'invalid', reason: 'the client certificate has no common name' };
  return { kind: 'user', user: { name, uid: '', groups: values(subject.O) } };
}

const perConnection = new WeakMap<object, CertResult>();

/** authenticateCertificate, read once per TLS connection and forgotten when it closes. */
export function authenticateConnection(socket: Partial<TLSSocket>): CertResult {
  const known = perConnection.get(socket);
  if (known !== undefined) return known;
  const result = authenticateCertificate(socket);
  // Only a socket that can tell us it closed is cached (anything else is read every time).
  if (typeof socket.once === 'function' && socket.destroyed !== true) {
    perConnection.set(socket, result);
    socket.once('close', () => {
      perConnection.delete(socket);
    });
  }
  return result;
}

/** Whether a connection's identity is cached (for tests). */
export function connectionCached(socket: object): boolean {
  return perConnection.has(socket);
}

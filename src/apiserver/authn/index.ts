/**
 * authn: who sends a request. Client certificates verified by the TLS layer against the client
 * CAs (CN = user name, O = groups) and bearer tokens from a static token file are tried in that
 * order; the first that succeeds wins. A request without credentials is anonymous
 * (`system:anonymous`, group `system:unauthenticated`); the router allows anonymous requests only
 * on the health and version endpoints. Authenticated users also get `system:authenticated`.
 *
 * Must not: decide what a user may do (authz), or load files after start (the token file is
 * read once, by loadTokenFile).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { authenticateToken, type TokenTable } from './token-file.js';
import { authenticateConnection } from './x509.js';

export { loadTokenFile, parseTokenFile, type TokenTable } from './token-file.js';

export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

export type AuthResult =
  | { readonly kind: 'user'; readonly user: UserInfo; readonly via: 'x509' | 'token' }
  | { readonly kind: 'anonymous'; readonly user: UserInfo }
  /** Credentials were given but none is valid: answer 401 whatever the path. */
  | { readonly kind: 'invalid'; readonly reason: string };

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] };

export interface Authenticator {
  /** Synchronous, never throws. */
  authenticate(req: IncomingMessage): AuthResult;
}

export interface AuthenticatorOptions {
  readonly tokens?: TokenTable;
}

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes('system:authenticated') ? user : { ...user, groups: [...user.groups, 'system:authenticated'] };
}

/**
 * Who holds a bearer token of the token file (TokenReview): its user with the group
 * system:authenticated, or undefined. Never throws.
 */
export function userOfToken(token: string, tokens: TokenTable | undefined): UserInfo | undefined {
  if (token === '' || /\s/.test(token)) return undefined;
  const result = authenticateToken(`Bearer ${token}`, tokens);
  return result.kind === 'user' ? withAuthenticated(result.user) : undefined;
}

/** The union authenticator: x509 first, then the token file. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  return {
    authenticate(req) {
      const reasons: string[] = [];
      const cert = authenticateConnection(req.socket as Partial<TLSSocket>);
      if (cert.kind === 'user') return { kind: 'user', user: withAuthenticated(cert.user), via: 'x509' };
      if (cert.kind === 'invalid') reasons.push(cert.reason);
      const header = req.headers.authorization;
      if (header !== undefined) {
        const token = authenticateToken(header, options.tokens);
        if (token.kind === 'user') return { kind: 'user', user: withAuthenticated(token.user), via: 'token' };
        reasons.push(token.reason);
      }
      if (reasons.length > 0) return { kind: 'invalid', reason: reasons.join('; ') };
      return { kind: 'anonymous', user: ANONYMOUS };
    },
  };
}

/**
 * authn: who sends a request. Client certificates verified by the TLS layer against the client
 * CAs (CN = user name, O = groups), bearer tokens from a static token file, and service account
 * tokens (../serviceaccount, given as `serviceAccounts`) are tried in that order; the first that
 * succeeds wins. A request without credentials is anonymous
 * (`system:anonymous`, group `system:unauthenticated`); the router allows anonymous requests only
 * on the health and version endpoints. Authenticated users also get `system:authenticated`.
 *
 * Must not: decide what a user may do (authz), or load files after start (the token file is
 * read once, by loadTokenFile).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ServiceAccountAuthResult } from '../serviceaccount/index.js';
import { authenticateToken, type TokenTable } from './token-file.js';
import { authenticateConnection } from './x509.js';

export { loadTokenFile, parseTokenFile, type TokenTable } from './token-file.js';

export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  /** Extra attributes (service accounts: the bound pod, the token's ID). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AuthResult =
  | { readonly kind: 'user'; readonly user: UserInfo; readonly via: 'x509' | 'token' | 'serviceaccount' }
  | { readonly kind: 'anonymous'; readonly user: UserInfo }
  /** Credentials were given but none is valid: answer 401 whatever the path. */
  | { readonly kind: 'invalid'; readonly reason: string };

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] };

export interface Authenticator {
  /** Never rejects. */
  authenticate(req: IncomingMessage): Promise<AuthResult>;
}

/** Service account tokens: their user, or why they are refused, or `foreign` (not one). */
export interface TokenAuthenticator {
  authenticate(token: string, audiences?: readonly string[]): Promise<ServiceAccountAuthResult>;
}

export interface AuthenticatorOptions {
  readonly tokens?: TokenTable;
  readonly serviceAccounts?: TokenAuthenticator;
}

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes('system:authenticated') ? user : { ...user, groups: [...user.groups, 'system:authenticated'] };
}

/** The bearer token of an Authorization header, or undefined. */
function bearerOf(header: string): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Who holds a bearer token (TokenReview): a user of the token file or a service account, with
 * the group system:authenticated, and the audiences it was checked against; or why it is refused
 * (`error`, for service account tokens). Never rejects.
 */
export async function reviewToken(
  token: string, audiences: readonly string[], options: AuthenticatorOptions,
): Promise<{ user?: UserInfo; audiences?: readonly string[]; error?: string }> {
  if (token === '' || /\s/.test(token)) return {};
  const result = authenticateToken(`Bearer ${token}`, options.tokens);
  // Static tokens are not bound to audiences: valid for whichever the reviewer names.
  if (result.kind === 'user') return { user: withAuthenticated(result.user), audiences };
  const sa = await options.serviceAccounts?.authenticate(token, audiences);
  if (sa?.kind === 'user') return { user: withAuthenticated(sa.user), audiences: audiences.length === 0 ? [] : sa.audiences };
  return sa?.kind === 'invalid' ? { error: sa.reason } : {};
}

/** The union authenticator: x509 first, then the token file, then service account tokens. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  return {
    async authenticate(req) {
      const reasons: string[] = [];
      const cert = authenticateConnection(connectionOf(req));
      if (cert.kind === 'user') return { kind: 'user', user: withAuthenticated(cert.user), via: 'x509' };
      if (cert.kind === 'invalid') reasons.push(cert.reason);
      const header = req.headers.authorization;
      if (header !== undefined) {
        const token = authenticateToken(header, options.tokens);
        if (token.kind === 'user') return { kind: 'user', user: withAuthenticated(token.user), via: 'token' };
        const bearer = bearerOf(header);
        const sa = bearer === undefined || options.serviceAccounts === undefined ? undefined : await options.serviceAccounts.authenticate(bearer);
        if (sa?.kind === 'user') return { kind: 'user', user: withAuthenticated(sa.user), via: 'serviceaccount' };
        reasons.push(sa?.kind === 'invalid' ? sa.reason : token.reason);
      }
      if (reasons.length > 0) return { kind: 'invalid', reason: reasons.join('; ') };
      return { kind: 'anonymous', user: ANONYMOUS };
    },
  };
}

/**
 * The TLS connection a request came on, whose client certificate authenticates it: HTTP/1.1's
 * socket, or HTTP/2's session socket (one per connection; an HTTP/2 request's own `socket` is a
 * view made per stream, so that a per-connection cache keyed by it would miss every time).
 */
function connectionOf(req: IncomingMessage): Partial<TLSSocket> {
  const session = (req as { stream?: { session?: { socket?: Partial<TLSSocket> } } }).stream?.session?.socket;
  return session ?? (req.socket as Partial<TLSSocket>);
}

/**
 * What authentication yields: the user a request acts as, or why it has none.
 */
import type { IncomingMessage } from 'node:http';

export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type AuthnMethod = 'x509' | 'token' | 'anonymous';

export type AuthnOutcome =
  /** The request acts as `user`. */
  | { readonly kind: 'user'; readonly user: UserInfo; readonly method: AuthnMethod }
  /** The request carries no credentials of this kind. */
  | { readonly kind: 'none' }
  /** Credentials were given and are not valid (or could not be checked): answer 401. */
  | { readonly kind: 'error'; readonly reason: string };

/** One way of authenticating (client certificate, bearer token). */
export interface RequestAuthenticator {
  /** Never rejects: failures are `error` outcomes. */
  authenticate(req: IncomingMessage): Promise<AuthnOutcome>;
}

export const ANONYMOUS_USER: UserInfo = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} };
export const AUTHENTICATED_GROUP = 'system:authenticated';

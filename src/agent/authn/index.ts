/**
 * authn: who sends a request to the agent's secure server. Client certificates (verified by
 * the TLS layer against authentication.x509.clientCAFile), then bearer tokens (TokenReview
 * through the API server when authentication.webhook.enabled, cached cacheTTL); the first
 * that succeeds wins and gets the group system:authenticated. As upstream: credentials that
 * were given and are invalid answer 401 even when anonymous requests are allowed; a request
 * without credentials is system:anonymous (group system:unauthenticated) when
 * authentication.anonymous.enabled, else 401.
 *
 * Must not: decide what a user may do (authz), or talk HTTP itself (the review function is
 * injected; orchclient implements it).
 */
import type { IncomingMessage } from 'node:http';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, type AuthnOutcome, type RequestAuthenticator, type UserInfo } from './types.js';

export { ANONYMOUS_USER, AUTHENTICATED_GROUP, type AuthnMethod, type AuthnOutcome, type RequestAuthenticator, type UserInfo } from './types.js';
export { certificateOutcome, createX509Authenticator } from './x509.js';
export { bearerToken, createTokenWebhookAuthenticator, type TokenAuthenticator, type TokenWebhookOptions } from './token.js';

export interface AuthenticatorOptions {
  /** Tried in order: client certificates first, then tokens. */
  readonly authenticators: readonly RequestAuthenticator[];
  readonly anonymous: boolean;
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/**
 * The request authenticator of the secure server. Resolves to a `user` outcome or an `error`
 * outcome (never `none`); never rejects.
 */
export function createAuthenticator(options: AuthenticatorOptions): RequestAuthenticator {
  return {
    async authenticate(req: IncomingMessage): Promise<AuthnOutcome> {
      const errors: string[] = [];
      for (const a of options.authenticators) {
        const outcome = await a.authenticate(req);
        if (outcome.kind === 'user') return { ...outcome, user: withAuthenticatedGroup(outcome.user) };
        if (outcome.kind === 'error') errors.push(outcome.reason);
      }
      if (errors.length > 0) return { kind: 'error', reason: errors.join('; ') };
      if (options.anonymous) return { kind: 'user', method: 'anonymous', user: ANONYMOUS_USER };
      return { kind: 'error', reason: 'no credentials and anonymous requests are not allowed' };
    },
  };
}

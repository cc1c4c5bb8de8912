/**
 * Bearer-token authentication through the TokenReview API, as upstream's delegating
 * authenticator does it: the token is read from `Authorization: Bearer <token>` (scheme
 * case-insensitive; an empty token is no token), reviewed by the API server, and the answer,
 * authenticated or not, is cached for cacheTTL. A failed review call is an error and is not
 * cached. Concurrent requests with the same token share one review.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { TokenReviewStatus } from '../orchclient/index.js';
import type { AuthnOutcome, RequestAuthenticator } from './types.js';

export interface TokenWebhookOptions {
  /** Asks the API server about one token (orchclient's createTokenReview). */
  review(token: string): Promise<TokenReviewStatus>;
  /** How long an answer is reused (authentication.webhook.cacheTTL), ms. */
  readonly cacheTtlMs: number;
  /** The cache's expiry times. */
  readonly clock: Pick<Clock, 'now'>;
  /** Most answers kept (oldest dropped first); default 4096. */
  readonly maxEntries?: number;
}

/** The bearer token of a request, or undefined (upstream's rules). */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = (req.headers.authorization ?? '').trim();
  if (header === '') return undefined;
  const parts = header.split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1] ?? '';
  return token === '' ? undefined : token;
}

function outcomeOf(status: TokenReviewStatus): AuthnOutcome {
  if (status.authenticated !== true) {
    const why = status.error !== undefined && status.error !== '' ? `: ${status.error}` : '';
    return { kind: 'error', reason: `invalid bearer token${why}` };
  }
  const u = status.user ?? {};
  return {
    kind: 'user',
    method: 'token',
    user: { name: u.username ?? '', uid: u.uid ?? '', groups: [...(u.groups ?? [])], extra: u.extra ?? {} },
  };
}

export interface TokenAuthenticator extends RequestAuthenticator {
  /** Reviews calls made so far (for tests and metrics). */
  reviews(): number;
}

export function createTokenWebhookAuthenticator(options: TokenWebhookOptions): TokenAuthenticator {
  const now = (): number => options.clock.now();
  const max = options.maxEntries ?? 4096;
  const cache = new Map<string, { outcome: AuthnOutcome; expires: number }>();
  const inFlight = new Map<string, Promise<AuthnOutcome>>();
  let calls = 0;

  async function review(key: string, token: string): Promise<AuthnOutcome> {
    calls++;
    let outcome: AuthnOutcome;
    try {
      outcome = outcomeOf(await options.review(token));
    } catch (err) {
      return { kind: 'error', reason: `token review failed: ${messageOf(err)}` };
    }
    cache.delete(key);
    cache.set(key, { outcome, expires: now() + options.cacheTtlMs });
    while (cache.size > max) {
      const oldest = cache.keys().next();
      if (oldest.done === true) break;
      cache.delete(oldest.value);
    }
    return outcome;
  }

  return {
    authenticate(req) {
      const token = bearerToken(req);
      if (token === undefined) return Promise.resolve({ kind: 'none' });
      const key = createHash('sha256').update(token).digest('hex');
      const hit = cache.get(key);
      if (hit !== undefined && hit.expires > now()) return Promise.resolve(hit.outcome);
      let pending = inFlight.get(key);
      if (pending === undefined) {
        pending = review(key, token).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
    reviews: () => calls,
  };
}

/**
 * The token manager (upstream: pkg/kubelet/token): service account tokens for the
 * serviceAccountToken sources of projected volumes, requested from the API server's
 * serviceaccounts/<name>/token (a TokenRequest bound to the pod, with the source's audience and
 * expirationSeconds) and kept per pod, service account, audience and validity. A kept token
 * serves until 80 % of its lifetime has passed (or 24 hours), as upstream: the volume's next
 * refresh (every pod sync) then writes a new one. When a refresh fails while the kept token is
 * still valid, the kept one serves and the failure is logged. Tokens of a pod go with its volumes.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { RestClient } from '../orchclient/index.js';
import { VOLUME_TOKEN_UNAVAILABLE, type ServiceAccountTokenRequest, type ServiceAccountTokenSource } from './types.js';

/** Upstream's maxTTL: a kept token is refreshed after a day whatever its validity. */
export const MAX_TOKEN_AGE_MS = 24 * 3600 * 1000;
/** The share of a token's lifetime after which it is refreshed. */
export const REFRESH_AT = 0.8;

interface KeptToken {
  readonly token: string;
  /** When it was issued and when it expires (ms). */
  readonly issuedAt: number;
  readonly expiresAt: number;
}

interface TokenRequestAnswer {
  readonly spec?: { readonly expirationSeconds?: number };
  readonly status?: { readonly token?: string; readonly expirationTimestamp?: string };
}

export interface TokenManagerOptions {
  readonly rest: RestClient;
  readonly clock: Clock;
  readonly logger: Logger;
}

export function createTokenManager(o: TokenManagerOptions): ServiceAccountTokenSource {
  /** `<podUID>/<serviceAccount>/<audience>/<seconds>` → the kept token. */
  const kept = new Map<string, KeptToken>();
  const inflight = new Map<string, Promise<KeptToken>>();

  function fresh(t: KeptToken, now: number): boolean {
    const lifetime = t.expiresAt - t.issuedAt;
    return now < t.issuedAt + lifetime * REFRESH_AT && now < t.issuedAt + MAX_TOKEN_AGE_MS;
  }

  async function request(pod: NodePod, serviceAccount: string, r: ServiceAccountTokenRequest): Promise<KeptToken> {
    const { namespace, name, uid } = pod.metadata;
    const body = {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: { audiences: r.audience === '' ? [] : [r.audience], expirationSeconds: r.expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid } },
    };
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`;
    const answer = await o.rest.create<TokenRequestAnswer>(path, body);
    const token = answer.status?.token ?? '';
    const expiresAt = Date.parse(answer.status?.expirationTimestamp ?? '');
    if (token === '' || Number.isNaN(expiresAt)) throw new Error('the TokenRequest was answered without a token or its expiry');
    const seconds = answer.spec?.expirationSeconds ?? r.expirationSeconds;
    return { token, expiresAt, issuedAt: expiresAt - seconds * 1000 };
  }

  return {
    async token(pod, r) {
      const serviceAccount = pod.spec?.serviceAccountName ?? '';
      const subject = `pod ${pod.metadata.namespace}/${pod.metadata.name}`;
      if (serviceAccount === '') {
        throw new OrchError(VOLUME_TOKEN_UNAVAILABLE, 'invalid', `${subject} names no service account: no token can be requested for it`, { subject });
      }
      const key = `${pod.metadata.uid}/${serviceAccount}/${r.audience}/${r.expirationSeconds}`;
      const now = o.clock.now();
      const current = kept.get(key);
      if (current !== undefined && fresh(current, now)) return current.token;
      let pending = inflight.get(key);
      if (pending === undefined) {
        pending = request(pod, serviceAccount, r).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      try {
        const next = await pending;
        kept.set(key, next);
        o.logger.v(3, 'requested a service account token', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, serviceAccount, audience: r.audience, expiresAt: new Date(next.expiresAt).toISOString() });
        return next.token;
      } catch (err) {
        if (current !== undefined && now < current.expiresAt) {
          o.logger.warn('cannot refresh a service account token; the current one serves until it expires', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, serviceAccount, err: messageOf(err) });
          return current.token;
        }
        throw new OrchError(VOLUME_TOKEN_UNAVAILABLE, 'unavailable', `cannot get a token of service account ${pod.metadata.namespace}/${serviceAccount} for ${subject}: ${messageOf(err)}`, { subject, cause: err });
      }
    },
    forgetPod(uid) {
      for (const key of [...kept.keys()]) if (key.startsWith(`${uid}/`)) kept.delete(key);
    },
  };
}

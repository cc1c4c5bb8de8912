/**
 * Authenticating a bearer token as a service account (upstream: the service account token
 * authenticator with its validator): the token verifies (tokens.ts), one of its audiences is
 * one the caller accepts (the --api-audiences for requests; a TokenReview's own), the service
 * account it names still exists with the same UID, and so does the pod or secret it is bound to
 * (one deleted less than a minute ago still counts, as upstream). The user is
 * `system:serviceaccount:<namespace>:<name>` with the service account's UID, the groups
 * `system:serviceaccounts` and `system:serviceaccounts:<namespace>`, and the extra keys of the
 * bound pod and the token's ID (upstream's authentication.kubernetes.io/, renamed).
 */
import { messageOf } from '../../api/errors.js';
import type { Clock } from '../../api/clock.js';
import { metaOf, str, type WireObject } from '../registry/index.js';
import type { TokenIssuer, VerifiedToken } from './tokens.js';
import { LEEWAY_SECONDS } from './tokens.js';

export interface ServiceAccountUser {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type ServiceAccountAuthResult =
  | { readonly kind: 'user'; readonly user: ServiceAccountUser; readonly audiences: readonly string[] }
  | { readonly kind: 'invalid'; readonly reason: string }
  /** Not a service account token of this server: other authenticators may know it. */
  | { readonly kind: 'foreign' };

/** Reads an object of the server (undefined: it does not exist). */
export type ObjectLookup = (resource: 'serviceaccounts' | 'pods' | 'secrets', namespace: string, name: string) => Promise<WireObject | undefined>;

export interface ServiceAccountAuthenticatorOptions {
  readonly issuer: TokenIssuer;
  readonly lookup: ObjectLookup;
  /** --api-audiences: what a request's token must be meant for. */
  readonly apiAudiences: readonly string[];
  readonly clock: Pick<Clock, 'now'>;
}

export interface ServiceAccountAuthenticator {
  /** The token's user, or why it is refused; `audiences` replaces the API audiences (a TokenReview's). Never rejects. */
  authenticate(token: string, audiences?: readonly string[]): Promise<ServiceAccountAuthResult>;
}

export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
/** The extra keys of the user (upstream: authentication.kubernetes.io/...). */
export const EXTRA_POD_NAME = 'authentication.orch.io/pod-name';
export const EXTRA_POD_UID = 'authentication.orch.io/pod-uid';
export const EXTRA_CREDENTIAL_ID = 'authentication.orch.io/credential-id';

export function serviceAccountUserName(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

export function createServiceAccountAuthenticator(o: ServiceAccountAuthenticatorOptions): ServiceAccountAuthenticator {
  /** Why the object the token names does not hold (undefined: it does). */
  async function problemWith(kind: 'service account' | 'pod' | 'secret', resource: 'serviceaccounts' | 'pods' | 'secrets', namespace: string, ref: { name: string; uid: string }): Promise<string | undefined> {
    const object = await o.lookup(resource, namespace, ref.name);
    const deleted = `${kind} ${namespace}/${ref.name} has been deleted`;
    if (object === undefined) return deleted;
    const meta = metaOf(object);
    const deletion = Date.parse(str(meta.deletionTimestamp));
    if (!Number.isNaN(deletion) && deletion < o.clock.now() - LEEWAY_SECONDS * 1000) return deleted;
    const uid = str(meta.uid);
    if (uid !== ref.uid) return `${kind} UID (${uid}) does not match the claim (${ref.uid})`;
    return undefined;
  }

  async function bindingProblem(t: VerifiedToken): Promise<string | undefined> {
    return (await problemWith('service account', 'serviceaccounts', t.namespace, t.serviceAccount))
      ?? (t.secret === undefined ? undefined : await problemWith('secret', 'secrets', t.namespace, t.secret))
      ?? (t.pod === undefined ? undefined : await problemWith('pod', 'pods', t.namespace, t.pod));
  }

  return {
    async authenticate(token, audiences) {
      const verified = await o.issuer.verify(token, o.clock.now());
      if (verified.kind !== 'valid') return verified;
      const t = verified.token;
      const wanted = audiences !== undefined && audiences.length > 0 ? audiences : o.apiAudiences;
      const matched = t.audiences.filter((a) => wanted.includes(a));
      if (matched.length === 0) return { kind: 'invalid', reason: `service account token: token audiences ${JSON.stringify(t.audiences)} are not among the accepted ${JSON.stringify(wanted)}` };
      let problem: string | undefined;
      try {
        problem = await bindingProblem(t);
      } catch (err) {
        return { kind: 'invalid', reason: `service account token: cannot check what it is bound to: ${messageOf(err)}` };
      }
      if (problem !== undefined) return { kind: 'invalid', reason: `service account token: ${problem}` };
      const extra: Record<string, string[]> = {
        ...(t.pod === undefined ? {} : { [EXTRA_POD_NAME]: [t.pod.name], [EXTRA_POD_UID]: [t.pod.uid] }),
        ...(t.id === '' ? {} : { [EXTRA_CREDENTIAL_ID]: [`JTI=${t.id}`] }),
      };
      return {
        kind: 'user',
        user: {
          name: serviceAccountUserName(t.namespace, t.serviceAccount.name),
          uid: t.serviceAccount.uid,
          groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${t.namespace}`],
          extra,
        },
        audiences: matched,
      };
    },
  };
}

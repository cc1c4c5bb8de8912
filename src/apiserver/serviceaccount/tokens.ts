/**
 * Bound service account tokens as upstream issues them (JWS compact JWTs): `iss` (the first
 * --service-account-issuer), `sub` `system:serviceaccount:<namespace>:<name>`, `aud`, `iat`,
 * `nbf`, `exp`, `jti`, and the private claim `orch.io` (upstream's `kubernetes.io`) naming the
 * namespace, the service account and the object the token is bound to (a pod or a secret), each
 * with its UID. Verification checks the signature against every verifying key, the issuer
 * (any of the --service-account-issuer values), the times with upstream's leeway of one minute,
 * and reads the claims back; what they refer to is checked by the authenticator.
 */
import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { messageOf } from '../../api/errors.js';
import type { ServiceAccountKeys } from './keys.js';

/** Upstream's validation leeway for nbf and exp. */
export const LEEWAY_SECONDS = 60;
/** The private claim (upstream: kubernetes.io). */
export const PRIVATE_CLAIM = 'orch.io';

export interface ObjectRef {
  readonly name: string;
  readonly uid: string;
}

/** What a token says about its holder. */
export interface TokenSubject {
  readonly namespace: string;
  readonly serviceAccount: ObjectRef;
  readonly pod?: ObjectRef;
  readonly secret?: ObjectRef;
}

export interface IssueRequest extends TokenSubject {
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

export interface VerifiedToken extends TokenSubject {
  readonly audiences: readonly string[];
  /** The token's ID (jti), '' when it has none. */
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

/** A token of ours that does not verify (its reason), or one that is not ours at all. */
export type VerifyResult = { readonly kind: 'valid'; readonly token: VerifiedToken } | { readonly kind: 'invalid'; readonly reason: string } | { readonly kind: 'foreign' };

export interface TokenIssuerOptions {
  readonly keys: ServiceAccountKeys;
  /** --service-account-issuer: the first issues, all are accepted. */
  readonly issuers: readonly string[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function refOf(value: unknown): ObjectRef | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  return { name: str(r.name), uid: str(r.uid) };
}

export class TokenIssuer {
  constructor(private readonly options: TokenIssuerOptions) {}

  get issuer(): string {
    return this.options.issuers[0] ?? '';
  }

  /** Signs a token for the request; resolves to it and its expiry (ms). */
  async issue(r: IssueRequest): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(r.now / 1000);
    const exp = iat + r.expirationSeconds;
    const claim: Record<string, unknown> = {
      namespace: r.namespace,
      serviceaccount: { name: r.serviceAccount.name, uid: r.serviceAccount.uid },
      ...(r.pod === undefined ? {} : { pod: { name: r.pod.name, uid: r.pod.uid } }),
      ...(r.secret === undefined ? {} : { secret: { name: r.secret.name, uid: r.secret.uid } }),
    };
    const { signing } = this.options.keys;
    const token = await new SignJWT({ [PRIVATE_CLAIM]: claim })
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .setIssuer(this.issuer)
      .setSubject(`system:serviceaccount:${r.namespace}:${r.serviceAccount.name}`)
      .setAudience([...r.audiences])
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(signing.key);
    return { token, expiresAt: exp * 1000 };
  }

  /** Verifies `token` at `now` (ms). Never throws. */
  async verify(token: string, now: number): Promise<VerifyResult> {
    let claims: JWTPayload;
    let kid: string | undefined;
    try {
      claims = decodeJwt(token);
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return { kind: 'foreign' }; // not a JWT: another authenticator's token
    }
    if (!this.options.issuers.includes(str(claims.iss))) return { kind: 'foreign' };
    const keys = this.options.keys.verifying.filter((k) => kid === undefined || k.kid === kid);
    if (keys.length === 0) return { kind: 'invalid', reason: 'service account token: no key of this server signed it' };
    let payload: JWTPayload | undefined;
    let failure = '';
    for (const key of keys) {
      try {
        payload = (await jwtVerify(token, key.key, { issuer: [...this.options.issuers], currentDate: new Date(now), clockTolerance: LEEWAY_SECONDS, algorithms: [key.alg] })).payload;
        break;
      } catch (err) {
        failure = err instanceof joseErrors.JWTExpired ? 'service account token has expired' : `service account token is invalid: ${messageOf(err)}`;
      }
    }
    if (payload === undefined) return { kind: 'invalid', reason: failure };
    const priv = payload[PRIVATE_CLAIM] as Record<string, unknown> | undefined;
    const serviceAccount = refOf(priv?.serviceaccount);
    const namespace = str(priv?.namespace);
    if (serviceAccount === undefined || namespace === '' || payload.sub !== `system:serviceaccount:${namespace}:${serviceAccount.name}`) {
      return { kind: 'invalid', reason: 'service account token: its claims do not name a service account' };
    }
    const pod = refOf(priv?.pod);
    const secret = refOf(priv?.secret);
    const aud = payload.aud;
    return {
      kind: 'valid',
      token: {
        namespace, serviceAccount, ...(pod === undefined ? {} : { pod }), ...(secret === undefined ? {} : { secret }),
        audiences: Array.isArray(aud) ? aud : aud === undefined ? [] : [aud],
        id: str(payload.jti),
        expiresAt: (payload.exp ?? 0) * 1000,
      },
    };
  }
}

/**
 * The secure server's gate, in upstream's order and words: authenticate (401 "Unauthorized"),
 * map the request to attributes on the node object, authorize (403 "Forbidden (user=...,
 * verb=..., resource=nodes, subresource=...)", or 500 "Authorization error (...)" when the
 * authorizer could not decide). Every request passes it, whatever its path.
 */
import type { IncomingMessage } from 'node:http';
import { messageOf } from '../../api/errors.js';
import type { RequestAuthenticator, UserInfo } from '../authn/index.js';
import {
  authorizationErrorMessage, forbiddenMessage, nodeRequestAttributes, type Authorizer,
} from '../authz/index.js';
import type { Logger } from '../logging/index.js';

export type AuthVerdict =
  | { readonly ok: true; readonly user: UserInfo }
  | { readonly ok: false; readonly status: 401 | 403 | 500; readonly message: string };

export interface AuthFilter {
  /** Never rejects. */
  check(req: IncomingMessage, path: string): Promise<AuthVerdict>;
}

export interface AuthFilterOptions {
  readonly authenticator: RequestAuthenticator;
  readonly authorizer: Authorizer;
  readonly nodeName: string;
  readonly logger: Logger;
}

export function createAuthFilter(o: AuthFilterOptions): AuthFilter {
  return {
    async check(req, path) {
      const authn = await o.authenticator.authenticate(req);
      if (authn.kind !== 'user') {
        const reason = authn.kind === 'error' ? authn.reason : 'no credentials';
        o.logger.v(2, 'Unable to authenticate the request', { path, reason });
        return { ok: false, status: 401, message: 'Unauthorized' };
      }
      const attrs = nodeRequestAttributes(authn.user, req.method ?? 'GET', path, o.nodeName);
      try {
        const decision = await o.authorizer.authorize(attrs);
        if (decision.allowed) return { ok: true, user: authn.user };
        o.logger.v(2, 'Forbidden', { user: attrs.user.name, verb: attrs.verb, resource: attrs.resource, subresource: attrs.subresource, reason: decision.reason });
        return { ok: false, status: 403, message: forbiddenMessage(attrs) };
      } catch (err) {
        o.logger.error('Authorization error', { user: attrs.user.name, verb: attrs.verb, subresource: attrs.subresource, err: messageOf(err) });
        return { ok: false, status: 500, message: authorizationErrorMessage(attrs) };
      }
    },
  };
}

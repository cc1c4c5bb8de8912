/**
 * The service account tokens of one server, from its flags: the keys, the issuer, the
 * authenticator (reading service accounts, pods and secrets through the registries) and the
 * serviceaccounts/token connector.
 */
import type { Clock } from '../../api/clock.js';
import type { ResourceRegistry } from '../registry/index.js';
import type { Connector } from '../routing/index.js';
import { StatusError } from '../status/index.js';
import { createServiceAccountAuthenticator, type ObjectLookup, type ServiceAccountAuthenticator } from './authenticator.js';
import { loadServiceAccountKeys, type KeyFiles } from './keys.js';
import { tokenRequestConnector } from './token-request.js';
import { TokenIssuer } from './tokens.js';

export interface ServiceAccountTokensOptions extends KeyFiles {
  readonly issuers: readonly string[];
  /** --api-audiences (empty: the issuers). */
  readonly apiAudiences: readonly string[];
  readonly maxExpirationSeconds: number;
  readonly maxRequestBytes: number;
  /** The core registries, once they exist. */
  readonly registryOf: (plural: 'serviceaccounts' | 'pods' | 'secrets') => ResourceRegistry;
  readonly clock: Pick<Clock, 'now'>;
}

export interface ServiceAccountTokens {
  readonly issuer: TokenIssuer;
  readonly authenticator: ServiceAccountAuthenticator;
  readonly connector: Connector;
  readonly apiAudiences: readonly string[];
  /** Reads a service account, pod or secret through the registries (undefined: not found). */
  readonly lookup: ObjectLookup;
}

/** Loads the keys (making one under the data directory when no signing key file is given). Throws APISERVER_SERVICE_ACCOUNT_KEY_INVALID. */
export function serviceAccountTokens(o: ServiceAccountTokensOptions): ServiceAccountTokens {
  const issuer = new TokenIssuer({ keys: loadServiceAccountKeys(o), issuers: o.issuers });
  const apiAudiences = o.apiAudiences.length === 0 ? o.issuers : o.apiAudiences;
  const lookup: ObjectLookup = async (resource, namespace, name) => {
    try {
      return await o.registryOf(resource).get(namespace, name);
    } catch (err) {
      if (err instanceof StatusError && err.httpCode === 404) return undefined;
      throw err;
    }
  };
  return {
    issuer,
    apiAudiences,
    lookup,
    authenticator: createServiceAccountAuthenticator({ issuer, lookup, apiAudiences, clock: o.clock }),
    connector: tokenRequestConnector({
      issuer, apiAudiences, maxExpirationSeconds: o.maxExpirationSeconds, maxRequestBytes: o.maxRequestBytes,
      pods: () => o.registryOf('pods'), secrets: () => o.registryOf('secrets'), now: () => new Date(o.clock.now()),
    }),
  };
}

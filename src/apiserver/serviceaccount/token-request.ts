/**
 * serviceaccounts/token (upstream's TokenREST): a POST of an authentication.k8s.io/v1 (or
 * authentication.orch.io/v1) TokenRequest, in JSON, YAML or protobuf, answered 201 with the
 * request and its status (the token, its expirationTimestamp) in the request's apiVersion, as
 * `kubectl create token` and the node agents' projected volumes ask. As upstream: the spec's
 * audiences default to the --api-audiences and expirationSeconds to an hour (at least 10 minutes,
 * at most 2^32 s, shortened to --service-account-max-token-expiration with a warning); the
 * token may be bound to a Pod of the service account (400 for a pod of another one) or a Secret
 * (a uid in the reference must match: 409), nothing else (400); a name or namespace in the body
 * must match the URL's (422).
 */
import { decodeBody, negotiate, readBody, send, warningHeaders } from '../http/index.js';
import { decodeObject, metaOf, str, type ResourceRegistry, type WireObject } from '../registry/index.js';
import type { Connector } from '../routing/index.js';
import { array, int64, object, objectMeta, str as strSchema, time, type ObjectSchema } from '../schema/index.js';
import { badRequest, conflict, FieldErrors } from '../status/index.js';
import { formatTime } from '../../api/time.js';
import type { TokenIssuer } from './tokens.js';

/** The group versions a TokenRequest body may name (upstream's, and ours). */
export const TOKEN_REQUEST_VERSIONS = ['authentication.k8s.io/v1', 'authentication.orch.io/v1'] as const;
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 2 ** 32;

export const tokenRequestSchema: ObjectSchema = object(
  {
    kind: strSchema('Kind of the object: TokenRequest.'),
    apiVersion: strSchema('Versioned schema of the object: authentication.k8s.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        audiences: array(strSchema(), { description: 'The intended audiences of the token (default: the API server\'s).' }),
        expirationSeconds: int64('The requested duration of validity (default 3600, at least 600).'),
        boundObjectRef: object(
          {
            kind: strSchema('Kind of the referent: Pod or Secret.'),
            apiVersion: strSchema('API version of the referent: v1.'),
            name: strSchema('Name of the referent.'),
            uid: strSchema('UID of the referent.'),
          },
          { name: 'io.orch.api.authentication.v1.BoundObjectReference' },
        ),
      },
      { name: 'io.orch.api.authentication.v1.TokenRequestSpec' },
    ),
    status: object(
      { token: strSchema('The opaque bearer token.'), expirationTimestamp: time('When the token expires.') },
      { name: 'io.orch.api.authentication.v1.TokenRequestStatus' },
    ),
  },
  {
    name: 'io.orch.api.authentication.v1.TokenRequest',
    required: ['spec'],
    gvk: [{ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, { group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest' }],
    description: 'TokenRequest requests a token for a given service account.',
  },
);

export interface TokenRequestOptions {
  readonly issuer: TokenIssuer;
  /** --api-audiences. */
  readonly apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds (0: no limit). */
  readonly maxExpirationSeconds: number;
  /** The registries a bound object is read from. */
  readonly pods: () => ResourceRegistry;
  readonly secrets: () => ResourceRegistry;
  readonly maxRequestBytes: number;
  readonly now?: () => Date;
}

/** The TokenRequest of a body, decoded strictly in the version it names. */
function requestOf(body: unknown): { request: WireObject; apiVersion: string } {
  const given = typeof body === 'object' && body !== null ? str((body as WireObject).apiVersion) : '';
  const apiVersion = given === '' ? TOKEN_REQUEST_VERSIONS[0] : given;
  if (!(TOKEN_REQUEST_VERSIONS as readonly string[]).includes(apiVersion)) {
    throw badRequest(`the API version in the body (${JSON.stringify(apiVersion)}) is not one of ${TOKEN_REQUEST_VERSIONS.join(', ')}`);
  }
  const [group = '', version = ''] = apiVersion.split('/');
  return { request: decodeObject({ group, version, kind: 'TokenRequest', schema: tokenRequestSchema }, body, 'Strict').object, apiVersion };
}

/** The spec's problems (upstream ValidateTokenRequest) and the URL checks, as a 422. */
function validate(request: WireObject, namespace: string, name: string): void {
  const errors = new FieldErrors();
  const meta = metaOf(request);
  if (str(meta.name) !== '' && str(meta.name) !== name) errors.invalid('metadata.name', meta.name, 'must match the service account name if specified');
  if (str(meta.namespace) !== '' && str(meta.namespace) !== namespace) errors.invalid('metadata.namespace', meta.namespace, 'must match the service account namespace if specified');
  const seconds = (request.spec as WireObject).expirationSeconds as number;
  if (seconds < MIN_EXPIRATION_SECONDS) errors.invalid('spec.expirationSeconds', seconds, 'may not specify a duration less than 10 minutes');
  if (seconds > MAX_EXPIRATION_SECONDS) errors.invalid('spec.expirationSeconds', seconds, 'may not specify a duration larger than 2^32 seconds');
  errors.throwIfAny('TokenRequest', 'authentication.k8s.io', name);
}

/** The pod or secret the token is bound to (its name and uid), checked as upstream. */
async function boundObject(o: TokenRequestOptions, ref: WireObject | undefined, namespace: string, serviceAccount: string): Promise<{ pod?: { name: string; uid: string }; secret?: { name: string; uid: string } }> {
  if (ref === undefined) return {};
  const kind = str(ref.kind);
  const apiVersion = str(ref.apiVersion);
  const name = str(ref.name);
  const core = apiVersion === 'v1' || apiVersion === '';
  if (!core || (kind !== 'Pod' && kind !== 'Secret')) {
    throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(serviceAccount)} to object of type ${apiVersion === '' ? '' : `${apiVersion}, `}Kind=${kind}`);
  }
  const object = await (kind === 'Pod' ? o.pods() : o.secrets()).get(namespace, name);
  const uid = str(metaOf(object).uid);
  if (kind === 'Pod' && str((object.spec as WireObject | undefined)?.serviceAccountName) !== serviceAccount) {
    throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(serviceAccount)} to pod running with different serviceaccount name.`);
  }
  const wanted = str(ref.uid);
  if (wanted !== '' && wanted !== uid) {
    throw conflict({ group: '', resource: kind }, name, `the UID in the bound object reference (${wanted}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  return kind === 'Pod' ? { pod: { name, uid } } : { secret: { name, uid } };
}

/** Issues the token of a decoded request for the service account `name`; resolves to the answered TokenRequest and any warning. */
export async function answerTokenRequest(
  o: TokenRequestOptions, serviceAccounts: ResourceRegistry, namespace: string, name: string, request: WireObject, now: Date,
): Promise<{ answer: WireObject; warnings: string[] }> {
  const spec = { ...(request.spec as WireObject | undefined) };
  spec.expirationSeconds ??= DEFAULT_EXPIRATION_SECONDS;
  const req: WireObject = { ...request, spec };
  validate(req, namespace, name);
  const sa = await serviceAccounts.get(namespace, name);
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? (spec.audiences as string[]) : [...o.apiAudiences];
  spec.audiences = audiences;
  const bound = await boundObject(o, spec.boundObjectRef as WireObject | undefined, namespace, name);
  const warnings: string[] = [];
  let seconds = spec.expirationSeconds as number;
  if (o.maxExpirationSeconds > 0 && seconds > o.maxExpirationSeconds) {
    warnings.push(`requested expiration of ${seconds} seconds shortened to ${o.maxExpirationSeconds} seconds`);
    seconds = o.maxExpirationSeconds;
    spec.expirationSeconds = seconds;
  }
  const issued = await o.issuer.issue({
    namespace, serviceAccount: { name, uid: str(metaOf(sa).uid) }, ...bound, audiences, expirationSeconds: seconds, now: now.getTime(),
  });
  const meta = { ...metaOf(req), name, namespace, creationTimestamp: formatTime(now.getTime()) };
  return { answer: { ...req, metadata: meta, status: { token: issued.token, expirationTimestamp: formatTime(issued.expiresAt) } }, warnings };
}

/** The connector of serviceaccounts/token. */
export function tokenRequestConnector(o: TokenRequestOptions): Connector {
  const now = o.now ?? (() => new Date());
  return {
    group: '',
    resource: 'serviceaccounts',
    subresource: 'token',
    async serve(r): Promise<void> {
      if (r.upgrade !== undefined) throw badRequest('serviceaccounts/token does not accept a protocol upgrade');
      const { request, apiVersion } = requestOf(decodeBody(await readBody(r.req, o.maxRequestBytes), r.req.headers['content-type']));
      const output = negotiate(r.req.headers.accept, ['yaml', 'protobuf'], r.query.bool('pretty'));
      const { answer, warnings } = await answerTokenRequest(o, r.registry, r.namespace, r.name, request, now());
      send(r.res, 201, { ...answer, kind: 'TokenRequest', apiVersion }, output, warningHeaders(warnings));
    },
  };
}

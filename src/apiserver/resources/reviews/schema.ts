/**
 * The wire schemas of the review kinds: authentication.orch.io/v1 TokenReview and
 * authorization.orch.io/v1 SubjectAccessReview, SelfSubjectAccessReview and
 * LocalSubjectAccessReview (upstream's authentication.k8s.io and authorization.k8s.io shapes).
 */
import { any, array, bool, object, objectMeta, str, type ObjectSchema } from '../../schema/index.js';

const extra = { type: 'map', values: array(str()), description: 'Extra attributes of the user (key to values).' } as const;

export const tokenReviewSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: TokenReview.'),
    apiVersion: str('Versioned schema of the object: authentication.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      { token: str('The opaque bearer token.'), audiences: array(str(), { description: 'Audiences the resource server presenting the token identifies as.' }) },
      { name: 'io.orch.api.authentication.v1.TokenReviewSpec' },
    ),
    status: object(
      {
        authenticated: bool('Whether the token is associated with a known user.'),
        user: object(
          { username: str(), uid: str(), groups: array(str()), extra },
          { name: 'io.orch.api.authentication.v1.UserInfo' },
        ),
        audiences: array(str(), { description: 'Audience identifiers chosen by the authenticator that the token is valid for.' }),
        error: str('Why the token could not be checked.'),
      },
      { name: 'io.orch.api.authentication.v1.TokenReviewStatus' },
    ),
  },
  {
    name: 'io.orch.api.authentication.v1.TokenReview',
    required: ['spec'],
    gvk: [{ group: 'authentication.orch.io', version: 'v1', kind: 'TokenReview' }],
    description: 'TokenReview attempts to authenticate a token to a known user. Answered, never stored.',
  },
);

const resourceAttributes = object(
  {
    namespace: str('The namespace of the action; "" for cluster-scoped resources or all namespaces.'),
    verb: str('A resource API verb (get, list, watch, create, update, delete, proxy) or "*".'),
    group: str('The API group of the resource ("" for core).'),
    version: str('The API version of the resource.'),
    resource: str('One of the existing resource types ("*" for all).'),
    subresource: str('One of the existing subresources.'),
    name: str('The name of the object ("" for all).'),
    fieldSelector: any('Field selector of the request (not used by this server\'s authorizers).'),
    labelSelector: any('Label selector of the request (not used by this server\'s authorizers).'),
  },
  { name: 'io.orch.api.authorization.v1.ResourceAttributes' },
);

const nonResourceAttributes = object(
  { path: str('The URL path of the request.'), verb: str('The standard HTTP verb (lowercase).') },
  { name: 'io.orch.api.authorization.v1.NonResourceAttributes' },
);

const accessStatus = object(
  {
    allowed: bool('Whether the action is allowed. Required.'),
    denied: bool('Whether the action is denied explicitly (never by this server\'s authorizers).'),
    reason: str('Why the action was allowed or denied.'),
    evaluationError: str('The authorizer\'s error, when it failed.'),
  },
  { name: 'io.orch.api.authorization.v1.SubjectAccessReviewStatus', required: ['allowed'] },
);

function accessReview(kind: string, spec: ObjectSchema, description: string): ObjectSchema {
  return object(
    {
      kind: str(`Kind of the object: ${kind}.`),
      apiVersion: str('Versioned schema of the object: authorization.orch.io/v1.'),
      metadata: objectMeta,
      spec,
      status: accessStatus,
    },
    { name: `io.orch.api.authorization.v1.${kind}`, required: ['spec'], gvk: [{ group: 'authorization.orch.io', version: 'v1', kind }], description },
  );
}

const subjectSpec = object(
  { resourceAttributes, nonResourceAttributes, user: str('The user to test for.'), groups: array(str(), { description: 'The groups to test for.' }), extra, uid: str() },
  { name: 'io.orch.api.authorization.v1.SubjectAccessReviewSpec' },
);

export const subjectAccessReviewSchema = accessReview('SubjectAccessReview', subjectSpec, 'SubjectAccessReview checks whether a user or group can perform an action. Answered, never stored.');
export const localSubjectAccessReviewSchema = accessReview('LocalSubjectAccessReview', subjectSpec, 'LocalSubjectAccessReview checks whether a user or group can perform an action in a namespace. Answered, never stored.');
export const selfSubjectAccessReviewSchema = accessReview(
  'SelfSubjectAccessReview',
  object({ resourceAttributes, nonResourceAttributes }, { name: 'io.orch.api.authorization.v1.SelfSubjectAccessReviewSpec' }),
  'SelfSubjectAccessReview checks whether the current user can perform an action (kubectl auth can-i). Answered, never stored.',
);

export const selfSubjectRulesReviewSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: SelfSubjectRulesReview.'),
    apiVersion: str('Versioned schema of the object: authorization.orch.io/v1.'),
    metadata: objectMeta,
    spec: object({ namespace: str('The namespace to list the rules in.') }, { name: 'io.orch.api.authorization.v1.SelfSubjectRulesReviewSpec' }),
    status: object(
      {
        resourceRules: array(object(
          { verbs: array(str()), apiGroups: array(str()), resources: array(str()), resourceNames: array(str()) },
          { name: 'io.orch.api.authorization.v1.ResourceRule', required: ['verbs'] },
        )),
        nonResourceRules: array(object(
          { verbs: array(str()), nonResourceURLs: array(str()) },
          { name: 'io.orch.api.authorization.v1.NonResourceRule', required: ['verbs'] },
        )),
        incomplete: bool('Whether the rules are incomplete (never: the policy is listed as it is).'),
        evaluationError: str('Why the rules could not be listed completely.'),
      },
      { name: 'io.orch.api.authorization.v1.SubjectRulesReviewStatus', required: ['resourceRules', 'nonResourceRules', 'incomplete'] },
    ),
  },
  {
    name: 'io.orch.api.authorization.v1.SelfSubjectRulesReview',
    required: ['spec'],
    gvk: [{ group: 'authorization.orch.io', version: 'v1', kind: 'SelfSubjectRulesReview' }],
    description: 'SelfSubjectRulesReview lists what the current user may do in a namespace (kubectl auth can-i --list). Answered, never stored.',
  },
);

export const selfSubjectReviewSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: SelfSubjectReview.'),
    apiVersion: str('Versioned schema of the object: authentication.orch.io/v1.'),
    metadata: objectMeta,
    status: object(
      { userInfo: object({ username: str(), uid: str(), groups: array(str()), extra }, { name: 'io.orch.api.authentication.v1.UserInfo' }) },
      { name: 'io.orch.api.authentication.v1.SelfSubjectReviewStatus' },
    ),
  },
  {
    name: 'io.orch.api.authentication.v1.SelfSubjectReview',
    gvk: [{ group: 'authentication.orch.io', version: 'v1', kind: 'SelfSubjectReview' }],
    description: 'SelfSubjectReview answers who the requester is, as the server authenticated them (kubectl auth whoami). Answered, never stored.',
  },
);

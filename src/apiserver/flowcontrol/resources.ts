/**
 * The flowcontrol.apiserver.orch.io/v1beta3 resources: FlowSchema and
 * PriorityLevelConfiguration (cluster-scoped, upstream's schema and validation of the fields
 * the dispatcher reads).
 */
import { AGE_COLUMN, str as strOf, type ResourceDefinition, type WireObject } from '../registry/index.js';
import { array, bool, int32, object, objectMeta, str, type ObjectSchema } from '../schema/index.js';
import type { FieldErrors } from '../status/index.js';
import { num, rec, recs, strings } from '../resources/common/index.js';
import { FLOWCONTROL_GROUP, FLOWCONTROL_VERSION } from './suggested.js';

const named = (what: string): ObjectSchema => object({ name: str(`The name of the ${what}.`) });

const subject = object({
  kind: str('User, Group or ServiceAccount.', { enum: ['User', 'Group', 'ServiceAccount'] }),
  user: named('user'),
  group: named('group'),
  serviceAccount: object({ namespace: str('The namespace of the service account.'), name: str('The name of the service account, or *.') }),
}, { name: 'io.orch.api.flowcontrol.v1beta3.Subject' });

const flowSchemaSchema: ObjectSchema = object({
  kind: str('Kind of the object: FlowSchema.'),
  apiVersion: str(`Versioned schema of the object: ${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION}.`),
  metadata: objectMeta,
  spec: object({
    priorityLevelConfiguration: named('priority level configuration'),
    matchingPrecedence: int32('1 to 10000; the schema with the lowest value that matches a request classifies it.'),
    distinguisherMethod: object({ type: str('ByUser or ByNamespace.', { enum: ['ByUser', 'ByNamespace'] }) }),
    rules: array(object({
      subjects: array(subject),
      resourceRules: array(object({
        verbs: array(str()), apiGroups: array(str()), resources: array(str()), clusterScope: bool(), namespaces: array(str()),
      })),
      nonResourceRules: array(object({ verbs: array(str()), nonResourceURLs: array(str()) })),
    })),
  }),
  status: object({ conditions: array(object({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() })) }),
}, { name: 'io.orch.api.flowcontrol.v1beta3.FlowSchema', gvk: [{ group: FLOWCONTROL_GROUP, version: FLOWCONTROL_VERSION, kind: 'FlowSchema' }], description: 'Classifies requests to a priority level.' });

const queuing = object({ queues: int32(), handSize: int32(), queueLengthLimit: int32() });
const levelSchema: ObjectSchema = object({
  kind: str('Kind of the object: PriorityLevelConfiguration.'),
  apiVersion: str(`Versioned schema of the object: ${FLOWCONTROL_GROUP}/${FLOWCONTROL_VERSION}.`),
  metadata: objectMeta,
  spec: object({
    type: str('Exempt or Limited.', { enum: ['Exempt', 'Limited'] }),
    limited: object({
      nominalConcurrencyShares: int32('This level\'s share of the server\'s concurrency limit.'),
      lendablePercent: int32(), borrowingLimitPercent: int32(),
      limitResponse: object({ type: str('Queue or Reject.', { enum: ['Queue', 'Reject'] }), queuing }),
    }),
    exempt: object({ nominalConcurrencyShares: int32(), lendablePercent: int32() }),
  }),
  status: object({ conditions: array(object({ type: str(), status: str(), lastTransitionTime: str(), reason: str(), message: str() })) }),
}, { name: 'io.orch.api.flowcontrol.v1beta3.PriorityLevelConfiguration', gvk: [{ group: FLOWCONTROL_GROUP, version: FLOWCONTROL_VERSION, kind: 'PriorityLevelConfiguration' }], description: 'A priority level: its share of concurrency and its queues.' });

function validateFlowSchema(fs: WireObject, errors: FieldErrors): void {
  const spec = rec(fs.spec);
  if (strOf(rec(spec.priorityLevelConfiguration).name) === '') errors.required('spec.priorityLevelConfiguration.name', 'must name a PriorityLevelConfiguration');
  const precedence = num(spec.matchingPrecedence);
  if (precedence !== undefined && (precedence < 1 || precedence > 10000)) errors.invalid('spec.matchingPrecedence', precedence, 'must be between 1 and 10000');
  recs(spec.rules).forEach((rule, i) => {
    if (recs(rule.subjects).length === 0) errors.required(`spec.rules[${i}].subjects`, 'at least one subject is required');
    recs(rule.subjects).forEach((s, j) => {
      if (!['User', 'Group', 'ServiceAccount'].includes(strOf(s.kind))) errors.notSupported(`spec.rules[${i}].subjects[${j}].kind`, s.kind, ['User', 'Group', 'ServiceAccount']);
    });
    recs(rule.resourceRules).forEach((rr, j) => {
      if (strings(rr.verbs).length === 0) errors.required(`spec.rules[${i}].resourceRules[${j}].verbs`, 'at least one verb is required');
      if (strings(rr.resources).length === 0) errors.required(`spec.rules[${i}].resourceRules[${j}].resources`, 'at least one resource is required');
    });
  });
}

function validateLevel(pl: WireObject, errors: FieldErrors): void {
  const spec = rec(pl.spec);
  const type = strOf(spec.type);
  if (type !== 'Exempt' && type !== 'Limited') {
    errors.notSupported('spec.type', spec.type, ['Exempt', 'Limited']);
    return;
  }
  if (type === 'Exempt') return;
  const limited = rec(spec.limited);
  const shares = num(limited.nominalConcurrencyShares);
  if (shares !== undefined && shares < 0) errors.invalid('spec.limited.nominalConcurrencyShares', shares, 'must be 0 or more');
  const response = rec(limited.limitResponse);
  if (response.type !== 'Reject') {
    const q = rec(response.queuing);
    const queues = num(q.queues) ?? 64;
    const hand = num(q.handSize) ?? 8;
    if (queues < 1) errors.invalid('spec.limited.limitResponse.queuing.queues', queues, 'must be at least 1');
    if (hand < 1 || hand > queues) errors.invalid('spec.limited.limitResponse.queuing.handSize', hand, `must be between 1 and queues (${queues})`);
    const length = num(q.queueLengthLimit);
    if (length !== undefined && length < 1) errors.invalid('spec.limited.limitResponse.queuing.queueLengthLimit', length, 'must be at least 1');
  }
}

function definition(kind: string, plural: string, singular: string, schema: ObjectSchema, validate: (o: WireObject, e: FieldErrors) => void,
  columns: ResourceDefinition['columns']): ResourceDefinition {
  return {
    group: FLOWCONTROL_GROUP, version: FLOWCONTROL_VERSION, kind, listKind: `${kind}List`, plural, singular, shortNames: [], categories: [],
    namespaced: false, verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    storage: plural, schema, statusSubresource: false, fieldLabels: [], fields: () => ({}), columns, nameColumn: true, nameRule: 'subdomain',
    allowCreateOnUpdate: false, returnDeletedObject: false,
    strategy: {
      validateCreate: (o, errors) => {
        validate(o, errors);
      },
      validateUpdate: (o, _old, errors) => {
        validate(o, errors);
      },
    },
  };
}

export const flowSchemaDefinition = definition('FlowSchema', 'flowschemas', 'flowschema', flowSchemaSchema, validateFlowSchema, [
  { name: 'PriorityLevel', type: 'string', description: 'The priority level of the matching requests.', priority: 0, cell: (o) => strOf(rec(rec(o.spec).priorityLevelConfiguration).name) },
  { name: 'MatchingPrecedence', type: 'integer', description: 'Lower values match first.', priority: 0, cell: (o) => num(rec(o.spec).matchingPrecedence) ?? 1000 },
  { name: 'DistinguisherMethod', type: 'string', description: 'How flows are told apart.', priority: 0, cell: (o) => strOf(rec(rec(o.spec).distinguisherMethod).type) || '<none>' },
  AGE_COLUMN,
]);

export const priorityLevelDefinition = definition('PriorityLevelConfiguration', 'prioritylevelconfigurations', 'prioritylevelconfiguration', levelSchema, validateLevel, [
  { name: 'Type', type: 'string', description: 'Exempt or Limited.', priority: 0, cell: (o) => strOf(rec(o.spec).type) },
  { name: 'NominalConcurrencyShares', type: 'integer', description: 'The share of the server\'s concurrency.', priority: 0, cell: (o) => num(rec(rec(o.spec).limited).nominalConcurrencyShares) ?? '<none>' },
  { name: 'Queues', type: 'integer', description: 'The number of queues.', priority: 0, cell: (o) => num(rec(rec(rec(rec(o.spec).limited).limitResponse).queuing).queues) ?? '<none>' },
  AGE_COLUMN,
]);

/**
 * The wire types cover the schemas: every field of every served kind's JSON schema has a field
 * of the same name in its protobuf message (or in an inlined one), so that nothing a JSON
 * client can write is lost for a protobuf client, and the kinds and their lists all have a
 * message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { alwaysAllow } from '../authz/index.js';
import { apiVersionOf, type ResourceDefinition } from '../registry/index.js';
import { nodeMetricsDefinition, podMetricsDefinition } from '../resourcemetrics/index.js';
import { csrDefinition } from '../resources/certificates/index.js';
import { configMapDefinition } from '../resources/configmaps/index.js';
import { eventDefinitions } from '../resources/events/index.js';
import { leaseDefinition } from '../resources/leases/index.js';
import { namespaceDefinition } from '../resources/namespaces/index.js';
import { nodeDefinition } from '../resources/nodes/index.js';
import { persistentVolumeClaimDefinition, persistentVolumeDefinition } from '../resources/persistentvolumes/index.js';
import { podDefinition } from '../resources/pods/index.js';
import { reviewDefinitions } from '../resources/reviews/index.js';
import { secretDefinition } from '../resources/secrets/index.js';
import { serviceAccountDefinition } from '../resources/serviceaccounts/index.js';
import { STORAGE_DEFINITIONS } from '../resources/storage/index.js';
import type { Schema } from '../schema/index.js';
import { TOKEN_REQUEST_VERSIONS, tokenRequestSchema } from '../serviceaccount/index.js';
import { x509Library } from '../server/index.js';
import { messageType } from './index.js';

const VALUE_TYPES = new Set(['Time', 'MicroTime', 'Duration', 'Quantity', 'IntOrString', 'FieldsV1', 'RawExtension', 'ExtraValue']);

/** The fields of a message with those of its inlined fields, by name. */
function fieldsOf(type: protobuf.Type): Map<string, protobuf.Field> {
  const out = new Map<string, protobuf.Field>();
  for (const f of type.fieldsArray) {
    if (f.options?.['(orch.inline)'] === true && f.resolvedType instanceof protobuf.Type) {
      for (const [k, v] of fieldsOf(f.resolvedType)) out.set(k, v);
    } else {
      out.set(f.name, f);
    }
  }
  return out;
}

/** Paths of schema fields the message lacks (or holds with an incompatible shape). */
function missing(schema: Schema, type: protobuf.Type, path: string, out: string[]): void {
  if (schema.type !== 'object') return;
  const fields = fieldsOf(type);
  for (const [name, sub] of Object.entries(schema.properties)) {
    if (path === '' && (name === 'kind' || name === 'apiVersion')) continue;
    const f = fields.get(name);
    const where = path === '' ? name : `${path}.${name}`;
    if (f === undefined) {
      out.push(where);
      continue;
    }
    const inner = sub.type === 'array' ? sub.items : sub.type === 'map' ? sub.values : sub;
    if (sub.type === 'array' && !f.repeated) out.push(`${where} (not repeated)`);
    if (sub.type === 'map' && !f.map && !(f.resolvedType instanceof protobuf.Type)) out.push(`${where} (not a map)`);
    if (inner.type === 'object' && f.resolvedType instanceof protobuf.Type && !VALUE_TYPES.has(f.resolvedType.name)) {
      missing(inner, f.resolvedType, where, out);
    }
  }
}

void describe('the protobuf wire types', () => {
  void it('have a message for every served kind and its list, covering every field of its schema', async () => {
    const defs: ResourceDefinition[] = [
      namespaceDefinition, ...eventDefinitions({ ttlSeconds: 3600 }), nodeDefinition, podDefinition, configMapDefinition, secretDefinition,
      serviceAccountDefinition, leaseDefinition, ...reviewDefinitions({ reviewToken: () => Promise.resolve({}), authorizer: alwaysAllow }),
      csrDefinition(await x509Library()), nodeMetricsDefinition, podMetricsDefinition,
      persistentVolumeDefinition, persistentVolumeClaimDefinition, ...STORAGE_DEFINITIONS,
    ];
    const problems: string[] = [];
    for (const def of defs) {
      const type = messageType(apiVersionOf(def), def.kind);
      if (type === undefined) {
        problems.push(`${def.kind} (${apiVersionOf(def)}): no message`);
        continue;
      }
      if (def.review === undefined && messageType(apiVersionOf(def), def.listKind) === undefined) problems.push(`${def.listKind}: no message`);
      const lacking: string[] = [];
      missing(def.schema, type, '', lacking);
      problems.push(...lacking.map((p) => `${def.kind}.${p}`));
    }
    assert.deepEqual(problems, []);
  });

  void it('cover the bodies of the action subresources (serviceaccounts/token)', () => {
    for (const apiVersion of TOKEN_REQUEST_VERSIONS) {
      const type = messageType(apiVersion, 'TokenRequest');
      assert.ok(type !== undefined, `TokenRequest (${apiVersion}): no message`);
      const lacking: string[] = [];
      missing(tokenRequestSchema, type, '', lacking);
      assert.deepEqual(lacking, []);
    }
  });
});

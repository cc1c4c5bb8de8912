/** Schemas as OpenAPI v3 component schemas (what `/openapi/v3/...` publishes and kubectl reads). */
import { listRule } from './merge-rules.js';
import type { Schema } from './types.js';

export type JsonObject = Record<string, unknown>;

function describe(schema: Schema, out: JsonObject): JsonObject {
  return schema.description === undefined ? out : { description: schema.description, ...out };
}

/**
 * The OpenAPI form of `schema`; every named object met on the way is added to `components`
 * (by name) and referenced with `$ref`.
 */
export function toOpenApi(schema: Schema, components: Map<string, JsonObject>): JsonObject {
  switch (schema.type) {
    case 'string': {
      const format = schema.format === 'micro-time' ? 'date-time' : schema.format;
      return describe(schema, {
        type: 'string',
        ...(format === undefined ? {} : { format }),
        ...(schema.enum === undefined ? {} : { enum: [...schema.enum] }),
        ...(schema.default === undefined ? {} : { default: schema.default }),
      });
    }
    case 'integer':
      return describe(schema, { type: 'integer', format: schema.format });
    case 'number':
      return describe(schema, { type: 'number', format: 'double' });
    case 'boolean':
      return describe(schema, { type: 'boolean' });
    case 'any':
      return describe(schema, { 'x-kubernetes-preserve-unknown-fields': true });
    case 'int-or-string':
      return describe(schema, { 'x-kubernetes-int-or-string': true });
    case 'map':
      return describe(schema, {
        type: 'object',
        additionalProperties: toOpenApi(schema.values, components),
        ...(schema.mapType === undefined ? {} : { 'x-kubernetes-map-type': schema.mapType }),
      });
    case 'array': {
      const rule = listRule(schema);
      return describe(schema, {
        type: 'array',
        items: toOpenApi(schema.items, components),
        ...(schema.mergeKey === undefined ? {} : { 'x-kubernetes-patch-merge-key': schema.mergeKey }),
        ...(schema.patchStrategy === undefined ? {} : { 'x-kubernetes-patch-strategy': schema.patchStrategy }),
        'x-kubernetes-list-type': rule.kind,
        ...(rule.kind === 'map' ? { 'x-kubernetes-list-map-keys': [...rule.keys] } : {}),
      });
    }
    case 'object': {
      const name = schema.name;
      if (name !== undefined && components.has(name)) return { $ref: `#/components/schemas/${name}` };
      // Reserve the name first: a schema that refers to itself ends here.
      if (name !== undefined) components.set(name, {});
      const properties: JsonObject = {};
      for (const [field, sub] of Object.entries(schema.properties)) properties[field] = toOpenApi(sub, components);
      const out = describe(schema, {
        type: 'object',
        properties,
        ...(schema.required === undefined ? {} : { required: [...schema.required] }),
        ...(schema.gvk === undefined ? {} : { 'x-kubernetes-group-version-kind': schema.gvk.map((g) => ({ ...g })) }),
        ...(schema.mapType === undefined ? {} : { 'x-kubernetes-map-type': schema.mapType }),
      });
      if (name === undefined) return out;
      components.set(name, out);
      return { $ref: `#/components/schemas/${name}` };
    }
  }
}

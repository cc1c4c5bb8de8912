/**
 * The applied configuration of a server-side apply, checked as upstream checks it before any
 * merge: an object of the view's apiVersion and kind (400 `invalid object type`), naming the
 * object of the URL, in its namespace, without managedFields, whose every field the schema
 * declares with the right JSON type and whose map lists and sets name each item once (400
 * `failed to create typed patch object (...)`, each problem with its path). Nothing is written
 * when it fails.
 */
import { applyProblems } from '../fieldmanager/index.js';
import { decodeStrict } from '../schema/index.js';
import { badRequest } from '../status/index.js';
import { apiVersionOf, type ResourceDefinition, type WireObject } from './resource.js';
import { quoteValue } from '../../api/quote.js';

/** `group/version, Kind=Kind` as upstream prints a GroupVersionKind (`/v1, Kind=Pod` for core). */
function gvkText(apiVersion: unknown, kind: unknown): string {
  const version = typeof apiVersion === 'string' ? apiVersion : '';
  const gv = version.includes('/') ? version : `/${version}`;
  return `${gv}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/** `/` + the JSON path of a decode problem (`spec.containers[0].x` -> `.spec.containers[0].x`). */
function dotted(path: string): string {
  return path === '' || path.startsWith('[') ? path : `.${path}`;
}

/**
 * The configuration of an apply patch to `name` in `namespace`, decoded strictly (timestamps
 * canonical, nulls dropped). Throws 400 naming the field at fault.
 */
export function decodeApplied(def: ResourceDefinition, body: unknown, namespace: string, name: string): WireObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(`error decoding YAML: an apply patch must be an object (the ${def.kind}'s configuration), not ${Array.isArray(body) ? 'a list' : quoteValue(body)}`);
  }
  const raw = body as Record<string, unknown>;
  const apiVersion = apiVersionOf(def);
  if (raw.apiVersion !== apiVersion || raw.kind !== def.kind) {
    throw badRequest(`invalid object type: ${gvkText(raw.apiVersion, raw.kind)}: an apply patch to ${def.plural} must set apiVersion ${quoteValue(apiVersion)} and kind ${quoteValue(def.kind)}`);
  }
  const meta = raw.metadata;
  if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) throw badRequest('metadata: the metadata of an apply patch must be an object');
  const m = (meta ?? {}) as Record<string, unknown>;
  if (m.managedFields !== undefined && m.managedFields !== null) throw badRequest('metadata.managedFields must be nil');
  const given = m.name;
  if (given !== undefined && given !== name) {
    throw badRequest(`the name of the object (${quoteValue(given)}) does not match the name on the URL (${name}): metadata.name of an apply patch must name the object it is sent to`);
  }
  const ns = m.namespace;
  if (def.namespaced && ns !== undefined && ns !== '' && ns !== namespace) {
    throw badRequest(`the namespace of the provided object (${quoteValue(ns)}) does not match the namespace sent on the request (${namespace})`);
  }
  const decoded = decodeStrict(def.schema, raw);
  const problems = [
    ...decoded.typeErrors.map((e) => {
      const at = e.indexOf(': ');
      return at < 0 ? e : `${dotted(e.slice(0, at))}: ${e.slice(at + 2)}`;
    }),
    ...decoded.unknown.map((path) => `${dotted(path)}: field not declared in schema`),
    ...applyProblems(def.schema, decoded.value),
  ];
  if (problems.length > 0) {
    const where = `${def.namespaced ? `${namespace}/` : ''}${name}; ${gvkText(apiVersion, def.kind)}`;
    const text = problems.length === 1 ? problems[0] ?? '' : `errors:\n  ${problems.join('\n  ')}`;
    throw badRequest(`failed to create typed patch object (${where}): ${text}`);
  }
  const config: WireObject = { ...decoded.value, apiVersion, kind: def.kind };
  const decodedMeta = (config.metadata ?? {}) as Record<string, unknown>;
  config.metadata = { ...decodedMeta, name };
  return config;
}

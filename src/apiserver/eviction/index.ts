/**
 * eviction: pods/eviction, what `kubectl drain` posts: a policy/v1 Eviction (JSON, YAML or
 * protobuf) naming the pod, with DeleteOptions. There are no PodDisruptionBudgets here, so
 * every eviction is allowed: the pod is deleted as a DELETE with those options would (gracefully
 * when bound to a node) and the answer is 201 with a Success Status, as upstream's.
 *
 * Must not: serve anything but pods/eviction, or bypass the pods registry.
 */
import { decodeBody, errorOutput, readBody, send } from '../http/index.js';
import { metaOf, str, type WireObject } from '../registry/index.js';
import type { Connector } from '../routing/index.js';
import { decodeStrict, deleteOptions, object, objectMeta, str as strSchema } from '../schema/index.js';
import { badRequest, type StatusError } from '../status/index.js';
import { quoteValue } from '../../api/quote.js';

const evictionSchema = object({ kind: strSchema(), apiVersion: strSchema(), metadata: objectMeta, deleteOptions });

const EVICTION_VERSIONS = new Set(['policy/v1', 'policy/v1beta1']);

export interface EvictionOptions {
  readonly maxRequestBytes: number;
  readonly now?: () => Date;
}

function problem(message: string): StatusError {
  return badRequest(`invalid Eviction: ${message}`);
}

/** The Eviction of the body: its kind, apiVersion, name and namespace checked against the request. */
function evictionOf(body: unknown, namespace: string, name: string): WireObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw problem('the body must be an object of kind Eviction');
  const decoded = decodeStrict(evictionSchema, body as Record<string, unknown>);
  const problems = [...decoded.typeErrors, ...decoded.unknown.map((u) => `unknown field "${u}"`)];
  if (problems.length > 0) throw problem(problems.join('; '));
  const eviction = decoded.value;
  if (str(eviction.kind) !== 'Eviction') throw problem(`the kind must be Eviction, not ${quoteValue(eviction.kind)}`);
  if (!EVICTION_VERSIONS.has(str(eviction.apiVersion))) throw problem(`the apiVersion must be policy/v1, not ${quoteValue(eviction.apiVersion)}`);
  const meta = metaOf(eviction);
  if (str(meta.name) !== name) throw problem(`metadata.name ${quoteValue(meta.name)} does not match the pod ${quoteValue(name)}`);
  if (str(meta.namespace) !== '' && str(meta.namespace) !== namespace) throw problem(`metadata.namespace ${quoteValue(meta.namespace)} does not match the request's ${quoteValue(namespace)}`);
  return eviction;
}

export function evictionConnector(options: EvictionOptions): Connector {
  const now = options.now ?? (() => new Date());
  return {
    group: '',
    resource: 'pods',
    subresource: 'eviction',
    async serve(r) {
      if (r.upgrade !== undefined) throw badRequest('pods/eviction does not accept a protocol upgrade');
      const eviction = evictionOf(decodeBody(await readBody(r.req, options.maxRequestBytes), r.req.headers['content-type']), r.namespace, r.name);
      const opts = (eviction.deleteOptions ?? {}) as { gracePeriodSeconds?: number; dryRun?: string[]; preconditions?: { uid?: string; resourceVersion?: string } };
      for (const v of opts.dryRun ?? []) if (v !== 'All') throw problem(`deleteOptions.dryRun: unsupported value ${quoteValue(v)}`);
      const dryRun = r.query.dryRun() || (opts.dryRun ?? []).length > 0;
      await r.registry.delete({ user: r.user, now: now() }, r.namespace, r.name, {
        dryRun,
        ...(opts.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: opts.gracePeriodSeconds }),
        ...(opts.preconditions?.uid === undefined ? {} : { uid: opts.preconditions.uid }),
        ...(opts.preconditions?.resourceVersion === undefined ? {} : { resourceVersion: opts.preconditions.resourceVersion }),
      });
      send(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, errorOutput(r.req.headers.accept, false));
    },
  };
}

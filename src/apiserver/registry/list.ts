/**
 * Lists with selectors and paging. Without a limit the whole list is read at one revision.
 * With a limit, pages are read from the store at the first page's revision and filtered until
 * `limit` objects matched; the continue token is ours: the store's token of the page where the
 * next object is, plus how many objects of that page were already examined. `remainingItemCount`
 * is given only without selectors (as upstream). A token whose revision was compacted: 410 Expired;
 * one this server cannot read: 400 naming the parameter (never a parser's message).
 */
import { isGone, isOrchError } from '../../api/errors.js';
import type { FieldSelector, LabelSelector } from '../selectors/index.js';
import { StoreErrorCode, type ListOptions, type ResourceVersionMatch, type WatchIndex } from '../storage/index.js';
import { badRequest, expired, type StatusError } from '../status/index.js';
import { labelsOf, metaOf, str } from './meta.js';
import type { ResourceRegistry } from './registry.js';
import type { WireObject } from './resource.js';
import { quoteValue } from '../../api/quote.js';

export interface ListRequest {
  /** '' lists every namespace. */
  readonly namespace: string;
  readonly labelSelector: LabelSelector;
  readonly fieldSelector: FieldSelector;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch;
}

export interface ListPage {
  readonly items: WireObject[];
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

interface Token {
  /** The revision of the first page. */
  readonly rv: string;
  /** The store's continue token of the page holding the next object ('' for the first page). */
  readonly t: string;
  /** Objects of that page already examined. */
  readonly s: number;
}

function encodeToken(token: Token): string {
  return Buffer.from(JSON.stringify({ v: 1, ...token }), 'utf8').toString('base64url');
}

/** The 400 of a continue token this server cannot read (whatever is wrong with it). */
function invalidToken(text: string): StatusError {
  const shown = text.length > 40 ? `${text.slice(0, 40)}...` : text;
  return badRequest(`invalid value for query parameter continue: ${quoteValue(shown)} is not a continue token of this list: `
    + 'pass the metadata.continue of the previous page as it is, or start the list again without continue');
}

function decodeToken(text: string): Token {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    // Not base64 of JSON: not one of ours. The parser's message would say nothing useful.
    throw invalidToken(text);
  }
  const { v, rv, t, s } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (v === 1 && typeof rv === 'string' && /^[1-9][0-9]*$/.test(rv) && typeof t === 'string' && typeof s === 'number' && Number.isInteger(s) && s >= 0) {
    return { rv, t, s };
  }
  throw invalidToken(text);
}

/** The values of every field label of a wire object (metadata.name, metadata.namespace and the resource's own). */
export function fieldsOf(registry: ResourceRegistry, object: WireObject): Record<string, string> {
  const meta = metaOf(object);
  return { ...registry.def.fields(object), 'metadata.name': str(meta.name), 'metadata.namespace': str(meta.namespace) };
}

export function matcher(registry: ResourceRegistry, labels: LabelSelector, fields: FieldSelector): (object: WireObject) => boolean {
  if (labels.empty && fields.empty) return () => true;
  return (object) => labels.matches(labelsOf(object)) && fields.matches(fieldsOf(registry, object));
}

/** The prefix to read: the namespace's, or the one a `metadata.namespace=` field selector names. */
function prefixFor(registry: ResourceRegistry, request: ListRequest): string {
  const ns = request.namespace !== '' ? request.namespace : (registry.def.namespaced ? request.fieldSelector.exact('metadata.namespace') : undefined);
  return registry.prefix(ns ?? '');
}

/**
 * The index hint of a list with an exact field requirement (spec.nodeName first; not
 * metadata.namespace: the prefix narrows it): a watch cache reads a node's pods from its index.
 */
function listIndex(registry: ResourceRegistry, request: ListRequest): WatchIndex | undefined {
  const exact = request.fieldSelector.requirements.filter((r) => r.operator === '=' && r.field !== 'metadata.namespace');
  const field = exact.find((r) => r.field === 'spec.nodeName') ?? exact[0];
  if (field === undefined) return undefined;
  const name = field.field;
  return {
    name: `${registry.def.group}/${registry.def.plural} field ${name}`,
    value: field.value,
    of: (stored) => fieldsOf(registry, registry.present(stored))[name] ?? '',
  };
}

export async function listObjects(registry: ResourceRegistry, request: ListRequest): Promise<ListPage> {
  const prefix = prefixFor(registry, request);
  const matches = matcher(registry, request.labelSelector, request.fieldSelector);
  const filtered = !request.labelSelector.empty || !request.fieldSelector.empty;
  const limit = request.limit ?? 0;
  const index = listIndex(registry, request);
  if (limit === 0) {
    const all = await registry.store.list(prefix, rvOptions(request, { index }));
    return { items: all.items.map((o) => registry.present(o)).filter(matches), resourceVersion: all.resourceVersion };
  }
  const resumed = request.continue !== undefined && request.continue !== '';
  const start: Token | undefined = resumed ? decodeToken(request.continue ?? '') : undefined;
  let pageToken = start?.t ?? '';
  let skip = start?.s ?? 0;
  let rv = start?.rv;
  const items: WireObject[] = [];
  try {
    for (;;) {
      const need = filtered ? Math.max(limit - items.length, 256) : limit - items.length;
      const options: ListOptions =
        pageToken !== '' ? { limit: need + skip, continue: pageToken }
          : rv !== undefined ? { limit: need + skip, resourceVersion: rv, resourceVersionMatch: 'Exact' }
            : rvOptions(request, { limit: need + skip, index });
      const page = await registry.store.list(prefix, options);
      rv = page.resourceVersion;
      // A watch cache answered resourceVersion "0" whole (as upstream's): no pages.
      if (page.limitIgnored === true) return { items: page.items.map((o) => registry.present(o)).filter(matches), resourceVersion: rv };
      for (let i = skip; i < page.items.length; i++) {
        const object = registry.present(page.items[i] as WireObject);
        if (!matches(object)) continue;
        items.push(object);
        if (items.length < limit) continue;
        const leftInPage = page.items.length - 1 - i;
        if (leftInPage > 0) {
          const remaining = filtered ? undefined : leftInPage + (page.remainingItemCount ?? 0);
          return withContinue(items, rv, encodeToken({ rv, t: pageToken, s: i + 1 }), remaining);
        }
        if (page.continue === undefined) return { items, resourceVersion: rv };
        return withContinue(items, rv, encodeToken({ rv, t: page.continue, s: 0 }), filtered ? undefined : page.remainingItemCount);
      }
      if (page.continue === undefined) return { items, resourceVersion: rv };
      pageToken = page.continue;
      skip = 0;
    }
  } catch (err) {
    if (resumed && isOrchError(err) && err.code === StoreErrorCode.invalidContinue) throw invalidToken(request.continue ?? '');
    if (resumed && isGone(err)) {
      throw expired('The provided continue parameter is too old to display a consistent list result: its resourceVersion was compacted. Start a new list without the continue parameter.');
    }
    throw err;
  }
}

function withContinue(items: WireObject[], rv: string, token: string, remaining: number | undefined): ListPage {
  return remaining === undefined ? { items, resourceVersion: rv, continue: token } : { items, resourceVersion: rv, continue: token, remainingItemCount: remaining };
}

function rvOptions(request: ListRequest, base: { limit?: number; index: WatchIndex | undefined }): ListOptions {
  return {
    ...base,
    ...(request.resourceVersion === undefined || request.resourceVersion === '' ? {} : { resourceVersion: request.resourceVersion }),
    ...(request.resourceVersionMatch === undefined ? {} : { resourceVersionMatch: request.resourceVersionMatch }),
  };
}

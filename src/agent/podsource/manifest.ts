/**
 * Decoding of a static pod manifest (the text of a file, or a URL's body) into pods: YAML
 * 1.1 as the kubelet reads it (so `0644` is octal and `yes` a boolean; timestamps stay
 * text), of which JSON is a subset. A manifest is one document holding a single Pod, or,
 * where the caller allows lists (the URL source), a PodList or a `kind: List` of Pods.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Tags } from 'yaml';

import { decodePod } from '../../api/pod/index.js';
import { quoteValue, truncateText } from '../../api/quote.js';
import { DEFAULT_YAML_LIMITS, readYamlLimited, type YamlLimits } from '../../api/yaml-limits.js';

export interface ManifestOptions {
  /** The file path or URL, named in every problem. */
  readonly origin: string;
  /** Accept PodList and List (the URL source); else only a single Pod (the file source). */
  readonly allowList: boolean;
  /** Size, nesting and node limits (DEFAULT_YAML_LIMITS unless given). */
  readonly limits?: YamlLimits;
}

export type ManifestResult =
  | { readonly ok: true; readonly pods: readonly Pod[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/** YAML 1.1 without the timestamp and base-60 number types, which upstream's decoder does not apply. */
function withoutTimes(tags: Tags): Tags {
  return tags.filter((t) => typeof t === 'string' || !(t.tag === 'tag:yaml.org,2002:timestamp' || t.format === 'TIME'));
}

const YAML_OPTIONS = { version: '1.1', customTags: withoutTimes } as const;

const MAX_SYNTAX_ERRORS = 5;

/** 1-based line and column of a character offset. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${line}:${column}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${quoteValue(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `the ${typeof value} ${value}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads the one document of `text`; returns its value or the problems. */
function readDocument(text: string, limits: YamlLimits): { value: unknown } | { problems: string[] } {
  const read = readYamlLimited(text, YAML_OPTIONS, limits);
  if (!read.ok) return { problems: [read.problem] };
  const docs = read.docs;
  const problems: string[] = [];
  const values: unknown[] = [];
  for (const doc of docs) {
    // A hostile text has thousands of errors: the first few say what is wrong.
    for (const err of doc.errors.slice(0, MAX_SYNTAX_ERRORS)) problems.push(`line ${lineAndColumn(text, err.pos[0])}: ${truncateText(err.message)}`);
    if (doc.errors.length > MAX_SYNTAX_ERRORS) problems.push(`and ${doc.errors.length - MAX_SYNTAX_ERRORS} more syntax errors`);
    if (doc.errors.length > 0) continue;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxAliases });
    } catch (err) {
      problems.push(`cannot read the document: ${truncateText(err instanceof Error ? err.message : String(err))}`);
      continue;
    }
    if (value !== null && value !== undefined) values.push(value);
  }
  if (problems.length > 0) return { problems };
  if (values.length === 0) return { problems: ['holds no object (the document is empty)'] };
  if (values.length > 1) return { problems: [`holds ${values.length} documents; a manifest holds a single one`] };
  return { value: values[0] };
}

function expectedKinds(allowList: boolean): string {
  return allowList ? 'Pod, PodList or List' : 'Pod';
}

/** A list's items, each checked as a Pod (`apiVersion`/`kind` may be omitted in a PodList). */
function readItems(list: Record<string, unknown>, listKind: string): ManifestResult {
  const items = list.items ?? [];
  if (!Array.isArray(items)) return { ok: false, problems: [`items: must be a list, not ${describe(items)}`] };
  const pods: Pod[] = [];
  const problems: string[] = [];
  items.forEach((item: unknown, i) => {
    const at = `items[${i}]`;
    if (isObject(item)) {
      const kind = item.kind ?? (listKind === 'PodList' ? 'Pod' : undefined);
      const apiVersion = item.apiVersion ?? (listKind === 'PodList' ? 'v1' : undefined);
      if (kind !== 'Pod') problems.push(`${at}.kind: ${kind === undefined ? 'is missing' : `must be Pod, not ${describe(kind)}`} (a List names each item's kind: Pod)`);
      if (apiVersion !== 'v1') problems.push(`${at}.apiVersion: ${apiVersion === undefined ? 'is missing' : `must be v1, not ${describe(apiVersion)}`}`);
      if (kind !== 'Pod' || apiVersion !== 'v1') return;
    }
    const decoded = decodePod(item, at);
    if (decoded.ok) pods.push({ ...decoded.pod, apiVersion: 'v1', kind: 'Pod' });
    else problems.push(...decoded.problems);
  });
  return problems.length === 0 ? { ok: true, pods } : { ok: false, problems };
}

function readObject(value: unknown, allowList: boolean): ManifestResult {
  if (!isObject(value)) return { ok: false, problems: [`must be an object of kind ${expectedKinds(allowList)}, not ${describe(value)}`] };
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (kind === undefined || kind === '') return { ok: false, problems: [`kind: is missing (expected ${expectedKinds(allowList)})`] };
  const known = kind === 'Pod' || (allowList && (kind === 'PodList' || kind === 'List'));
  if (typeof kind !== 'string' || !known) {
    return { ok: false, problems: [`kind: ${describe(kind)} is not supported (expected ${expectedKinds(allowList)})`] };
  }
  if (apiVersion !== 'v1') return { ok: false, problems: [`apiVersion: must be v1 for kind ${kind}, not ${describe(apiVersion)}`] };
  if (kind !== 'Pod') return readItems(value, kind);
  const decoded = decodePod(value);
  return decoded.ok ? { ok: true, pods: [decoded.pod] } : decoded;
}

/**
 * Decodes a manifest. Never throws: malformed YAML (with line:column), an empty text, more
 * than one document, another kind or a field of the wrong type give problems, each line
 * starting with `origin`. The pods are neither defaulted nor validated (see static.ts).
 */
export function decodeManifest(text: string, options: ManifestOptions): ManifestResult {
  const document = readDocument(text, options.limits ?? DEFAULT_YAML_LIMITS);
  const result = 'problems' in document ? { ok: false as const, problems: document.problems } : readObject(document.value, options.allowList);
  if (result.ok) return result;
  return { ok: false, problems: result.problems.map((p) => `${options.origin}: ${p}`) };
}

/**
 * Responses: content negotiation on the Accept header (JSON, YAML, the Kubernetes protobuf
 * encoding, meta.k8s.io Table and PartialObjectMetadata, aggregated discovery), JSON written
 * compact or indented (`pretty`), and errors written as Status objects.
 */
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import { encodeObject, isProtobufMediaType, PROTOBUF_MEDIA_TYPES } from '../protobuf/index.js';
import { notAcceptable, toStatusError, type StatusError } from '../status/index.js';

export type OutputKind = 'json' | 'yaml' | 'protobuf' | 'table' | 'partial' | 'discovery-v2';

export interface Output {
  readonly kind: OutputKind;
  /** For table/partial: the meta.k8s.io version asked for (v1 or v1beta1). */
  readonly version: string;
  readonly pretty: boolean;
  /** For protobuf: the media type the client named (answered with that name). */
  readonly mediaType?: string;
}

interface MediaRange {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*/*', params: new Map(), q: 1 }];
  const ranges = header.split(',').map((part) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params = new Map<string, string>();
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"|"$/g, ''));
    }
    const q = Number(params.get('q') ?? '1');
    return { type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 1 };
  });
  return ranges.filter((r) => r.q > 0).sort((a, b) => b.q - a.q);
}

/**
 * Parsed Accept headers by their text: clients send the same few headers on every request, and
 * parsing one took a measurable share of a small request. The ranges are never modified once
 * parsed. Bounded (emptied when full) so that odd headers cannot grow it.
 */
const ACCEPT_CACHE_SIZE = 64;
const parsedAccepts = new Map<string, readonly MediaRange[]>();

function acceptRanges(header: string | undefined): readonly MediaRange[] {
  const key = header ?? '';
  let ranges = parsedAccepts.get(key);
  if (ranges === undefined) {
    ranges = parseAccept(header);
    if (parsedAccepts.size >= ACCEPT_CACHE_SIZE) parsedAccepts.clear();
    parsedAccepts.set(key, ranges);
  }
  return ranges;
}

function classify(range: MediaRange): { kind: OutputKind; version: string; mediaType?: string } | undefined {
  const as = range.params.get('as');
  const group = range.params.get('g');
  const version = range.params.get('v') ?? '';
  if (as !== undefined) {
    if (range.type !== 'application/json') return undefined;
    if (group === 'meta.k8s.io' && (version === 'v1' || version === 'v1beta1')) {
      if (as === 'Table') return { kind: 'table', version };
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { kind: 'partial', version };
    }
    if (group === 'apidiscovery.k8s.io' && version === 'v2' && as === 'APIGroupDiscoveryList') return { kind: 'discovery-v2', version };
    return undefined;
  }
  if (['application/json', '*/*', 'application/*'].includes(range.type)) return { kind: 'json', version: '' };
  if (['application/yaml', 'application/x-yaml', 'text/yaml'].includes(range.type)) return { kind: 'yaml', version: '' };
  if (isProtobufMediaType(range.type)) return { kind: 'protobuf', version: '', mediaType: range.type };
  return undefined;
}

/** How an error is written to a client with this Accept header: protobuf when it asks so first, else JSON. */
export function errorOutput(accept: string | undefined, pretty: boolean): Output {
  try {
    return negotiate(accept, ['protobuf'], pretty);
  } catch {
    // A client that accepts none of our types still gets its error, as JSON.
    return { kind: 'json', version: '', pretty };
  }
}

/**
 * The first output the client accepts among `allowed` (JSON is always allowed). Throws 406
 * NotAcceptable when none fits.
 */
export function negotiate(accept: string | undefined, allowed: readonly OutputKind[], pretty: boolean): Output {
  for (const range of acceptRanges(accept)) {
    const found = classify(range);
    if (found !== undefined && (found.kind === 'json' || allowed.includes(found.kind))) return { ...found, pretty };
  }
  throw notAcceptable(['application/json', ...(allowed.includes('yaml') ? ['application/yaml'] : []), ...(allowed.includes('protobuf') ? PROTOBUF_MEDIA_TYPES : [])]);
}

export function serialize(body: unknown, output: Pick<Output, 'kind' | 'pretty'>): string | Buffer {
  if (output.kind === 'yaml') return stringify(body);
  if (output.kind === 'protobuf') return encodeObject(body as Record<string, unknown>);
  return `${JSON.stringify(body, null, output.pretty ? 2 : undefined)}\n`;
}

const CONTENT_TYPE: Readonly<Record<OutputKind, string>> = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: PROTOBUF_MEDIA_TYPES[0],
  table: 'application/json',
  partial: 'application/json',
  'discovery-v2': 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
};

/** Writes `body` with `code` in the negotiated format. */
export function send(res: ServerResponse, code: number, body: unknown, output: Pick<Output, 'kind' | 'pretty' | 'mediaType'>, headers: Record<string, string> = {}): void {
  const text = serialize(body, output);
  const type = output.kind === 'protobuf' ? output.mediaType ?? CONTENT_TYPE.protobuf : CONTENT_TYPE[output.kind];
  res.writeHead(code, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

/** Writes any thrown value as a Status (JSON, or YAML or protobuf when that was negotiated). */
export function sendError(res: ServerResponse, err: unknown, output: Pick<Output, 'kind' | 'pretty' | 'mediaType'>): StatusError {
  const status = toStatusError(err);
  if (res.headersSent) {
    res.destroy(status);
    return status;
  }
  const kind = output.kind === 'yaml' || output.kind === 'protobuf' ? output.kind : 'json';
  const headers: Record<string, string> = status.httpCode === 401 ? { 'WWW-Authenticate': 'Bearer realm="orch-apiserver"' } : {};
  const retryAfter = status.details?.retryAfterSeconds;
  if ((status.httpCode === 429 || status.httpCode === 503) && retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  send(res, status.httpCode, status.toStatus(), { kind, pretty: output.pretty, ...(output.mediaType === undefined ? {} : { mediaType: output.mediaType }) }, headers);
  return status;
}

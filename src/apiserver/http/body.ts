/**
 * Request bodies: read with a size limit (413 beyond it), decoded from JSON, YAML or the
 * Kubernetes protobuf encoding by content type (415 for anything else, 400 when malformed).
 * Never throws anything but StatusError.
 */
import type { IncomingMessage } from 'node:http';
import { truncateText } from '../../api/quote.js';
import { LineCounter } from 'yaml';
import { DEFAULT_YAML_LIMITS, jsonNestingProblem, readYamlLimited } from '../../api/yaml-limits.js';
import { jsonDuplicateMessage, jsonDuplicates, yamlDuplicates } from './duplicates.js';
import { decodeObject, isProtobufMediaType, PROTOBUF_MEDIA_TYPES, ProtobufDecodeError } from '../protobuf/index.js';
import { badRequest, tooLarge, unsupportedMediaType } from '../status/index.js';

/** The bare media type of a Content-Type header: `application/json; charset=utf-8` -> `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** Reads the whole body; rejects with 413 as soon as it exceeds `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!failed) reject(badRequest(`reading the request body failed: ${err.message}`));
      failed = true;
    });
  });
}

const JSON_TYPES = new Set(['application/json', '']);
const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml']);

/** The media types an object body may have. */
export const OBJECT_MEDIA_TYPES = ['application/json', 'application/yaml', ...PROTOBUF_MEDIA_TYPES] as const;

/** Objects nest a dozen levels; a body nesting deeper is refused before anything walks it. */
const MAX_DEPTH = DEFAULT_YAML_LIMITS.maxDepth;

function parseJson(text: string): unknown {
  const tooDeep = jsonNestingProblem(text, MAX_DEPTH);
  if (tooDeep !== undefined) throw badRequest(`the request body is not valid JSON: ${tooDeep}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${truncateText(err instanceof Error ? err.message : String(err))}`);
  }
}

/** A parsed body and its duplicate fields (the last of each is kept), worded as upstream's decoders. */
export interface ParsedBody {
  readonly value: unknown;
  readonly duplicates: readonly string[];
}

/**
 * Parses YAML the way Kubernetes' YAML-to-JSON conversion does (one document, YAML 1.1 scalars),
 * keeping the last of duplicate keys and reporting them (`line N: key "x" already set in map`).
 */
export function parseYamlFields(text: string): ParsedBody {
  // The body's size is readBody's to bound; nesting, values and aliases are bounded here.
  const lines = new LineCounter();
  const read = readYamlLimited(text, { version: '1.1', uniqueKeys: false, lineCounter: lines }, { ...DEFAULT_YAML_LIMITS, maxBytes: Number.POSITIVE_INFINITY });
  if (!read.ok) throw badRequest(`the request body is not valid YAML: ${read.problem}`);
  const docs = read.docs;
  const nonEmpty = docs.filter((d) => d.contents !== null);
  if (nonEmpty.length > 1) throw badRequest('the request body holds more than one YAML document');
  const doc = nonEmpty[0] ?? docs[0];
  if (doc === undefined) return { value: null, duplicates: [] };
  const problem = doc.errors[0];
  if (problem !== undefined) throw badRequest(`the request body is not valid YAML: ${truncateText(problem.message)}`);
  try {
    return { value: doc.toJS({ maxAliasCount: DEFAULT_YAML_LIMITS.maxAliases }) as unknown, duplicates: yamlDuplicates(doc, lines) };
  } catch (err) {
    throw badRequest(`the request body is not valid YAML: ${truncateText(err instanceof Error ? err.message : String(err))}`);
  }
}

/** Parses YAML as parseYamlFields does; a duplicate key is a 400. */
export function parseYaml(text: string): unknown {
  const parsed = parseYamlFields(text);
  const first = parsed.duplicates[0];
  if (first !== undefined) throw badRequest(`the request body is not valid YAML: ${first}`);
  return parsed.value;
}

/** An object in the protobuf encoding, in its JSON form (with its apiVersion and kind). */
function parseProtobuf(body: Buffer): unknown {
  if (body.length === 0) throw badRequest('the request body is empty');
  try {
    return decodeObject(body);
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw badRequest(`the request body is not a valid protobuf object: ${err.message}`);
    throw badRequest(`the request body is not a valid protobuf object: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The parsed body of `contentType`: JSON (also when no content type is given), YAML or
 * protobuf (objects only: not when `extraJson` names patch types), with `extraJson` naming more
 * JSON-syntax types accepted (the patch types), and its duplicate fields (JSON: `duplicate
 * field "x"`; YAML: `line N: key "x" already set in map`; the last of each is kept). Throws 415
 * or 400.
 */
export function decodeBodyFields(body: Buffer, contentType: string | undefined, extraJson: readonly string[] = []): ParsedBody {
  const type = mediaType(contentType);
  if (extraJson.length === 0 && isProtobufMediaType(type)) return { value: parseProtobuf(body), duplicates: [] };
  const text = body.toString('utf8');
  if (JSON_TYPES.has(type) || extraJson.includes(type)) {
    if (text.trim() === '') throw badRequest('the request body is empty');
    const value = parseJson(text);
    return { value, duplicates: jsonDuplicates(text, value).map(jsonDuplicateMessage) };
  }
  if (YAML_TYPES.has(type)) {
    if (text.trim() === '') throw badRequest('the request body is empty');
    return parseYamlFields(text);
  }
  throw unsupportedMediaType(type, extraJson.length === 0 ? OBJECT_MEDIA_TYPES : ['application/json', 'application/yaml', ...extraJson]);
}

/** The parsed body of `contentType` (decodeBodyFields without the duplicates: the last of each is kept). */
export function decodeBody(body: Buffer, contentType: string | undefined, extraJson: readonly string[] = []): unknown {
  return decodeBodyFields(body, contentType, extraJson).value;
}

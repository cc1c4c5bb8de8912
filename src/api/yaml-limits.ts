/**
 * Reading YAML (and JSON, a subset of it) that comes from outside with bounds: a size limit,
 * a nesting limit, a limit on the number of nodes and on aliases, all checked on the parser's
 * concrete syntax tree, which the parser builds without recursion, before the composer (which
 * recurses, and allocates a node per item) builds anything. A text past a limit is refused with
 * a message that names the limit and, for nesting, the line and column where it is crossed,
 * instead of a stack overflow, an out-of-memory crash or a minute of silence.
 */
import { Composer, CST, Lexer, LineCounter, Parser, type Document, type DocumentOptions, type ParseOptions, type SchemaOptions } from 'yaml';

export interface YamlLimits {
  /** Largest text, in bytes of its UTF-8 encoding. */
  readonly maxBytes: number;
  /** Deepest nesting of collections (a scalar at the top is depth 0). */
  readonly maxDepth: number;
  /** Most nodes (scalars and collections) in the whole text. */
  readonly maxNodes: number;
  /** Most aliases (`*name`) in the whole text. */
  readonly maxAliases: number;
}

const { DOCUMENT, FLOW_END, SCALAR } = CST;

/** Limits for a manifest, a request body or a configuration file: far above any real one. */
export const DEFAULT_YAML_LIMITS: YamlLimits = {
  maxBytes: 4 * 1024 * 1024,
  maxDepth: 100,
  maxNodes: 250_000,
  maxAliases: 100,
};

export type YamlReadResult =
  | { readonly ok: true; readonly docs: Document.Parsed[] }
  | { readonly ok: false; readonly problem: string };

const MiB = 1024 * 1024;

/** A byte count as people read it: "4 MiB", "1.5 MiB", "512 bytes". */
export function formatBytes(n: number): string {
  if (n >= MiB) return `${Number((n / MiB).toFixed(1))} MiB`;
  if (n >= 1024) return `${Number((n / 1024).toFixed(1))} KiB`;
  return `${n} bytes`;
}

/** The size problem of a text, if it is past `maxBytes`. */
export function sizeProblem(text: string, maxBytes: number): string | undefined {
  // Every UTF-16 unit is at least one byte: a text short enough in units needs no encoding.
  if (text.length * 3 <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > maxBytes ? `is ${formatBytes(bytes)}, larger than the limit of ${formatBytes(maxBytes)}` : undefined;
}

type Item = { key?: CST.Token | null; value?: CST.Token };

function childrenOf(token: CST.Token): CST.Token[] {
  let items: readonly Item[];
  switch (token.type) {
    case 'document':
      return token.value === undefined ? [] : [token.value];
    case 'block-map':
    case 'block-seq':
    case 'flow-collection':
      items = token.items;
      break;
    default:
      return [];
  }
  const out: CST.Token[] = [];
  for (const item of items) {
    if (item.key !== undefined && item.key !== null) out.push(item.key);
    if (item.value !== undefined) out.push(item.value);
  }
  return out;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);
const NODES = new Set(['block-map', 'block-seq', 'flow-collection', 'alias', 'scalar', 'single-quoted-scalar', 'double-quoted-scalar', 'block-scalar']);

/** Walks the syntax trees without recursion; the first limit crossed, if any. */
function treeProblem(tokens: readonly CST.Token[], limits: YamlLimits, at: (offset: number) => string): string | undefined {
  let nodes = 0;
  let aliases = 0;
  const stack: Array<{ token: CST.Token; depth: number }> = tokens.map((token) => ({ token, depth: 0 }));
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { token, depth } = next;
    if (NODES.has(token.type)) nodes++;
    if (token.type === 'alias') aliases++;
    if (nodes > limits.maxNodes) return `holds more than ${limits.maxNodes} values (at ${at(token.offset)})`;
    if (aliases > limits.maxAliases) return `holds more than ${limits.maxAliases} aliases (at ${at(token.offset)})`;
    const inner = COLLECTIONS.has(token.type) ? depth + 1 : depth;
    if (inner > limits.maxDepth) return `nesting too deep at ${at(token.offset)} (more than ${limits.maxDepth} levels)`;
    for (const child of childrenOf(token)) stack.push({ token: child, depth: inner });
  }
  return undefined;
}

/**
 * The first limit the text's tokens cross, counted on the lexer's stream (which holds nothing
 * but the current token): values, aliases and flow nesting. A text of millions of small values
 * is refused here, after reading as far as the limit, before any syntax tree exists.
 */
function tokenProblem(text: string, limits: YamlLimits, at: (offset: number) => string): string | undefined {
  let values = 0;
  let aliases = 0;
  let flow = 0;
  let offset = 0;
  let previous = '';
  for (const token of new Lexer().lex(text)) {
    if (token === SCALAR) {
      values++;
      if (values > limits.maxNodes) return `holds more than ${limits.maxNodes} values (at ${at(offset)})`;
    } else if (token === '[' || token === '{') {
      values++;
      flow++;
      if (flow > limits.maxDepth) return `nesting too deep at ${at(offset)} (more than ${limits.maxDepth} levels)`;
    } else if (token === ']' || token === '}') {
      flow--;
    } else if (token.startsWith('*') && previous !== SCALAR) {
      aliases++;
      if (aliases > limits.maxAliases) return `holds more than ${limits.maxAliases} aliases (at ${at(offset)})`;
    }
    // The stream is lossless: every token but the markers is source text.
    if (token !== SCALAR && token !== DOCUMENT && token !== FLOW_END) offset += token.length;
    previous = token;
  }
  return undefined;
}

/**
 * Parses every document of `text` within `limits`. Syntax errors stay in each document's
 * `errors` as the yaml library reports them; a crossed limit is the one `problem`. A
 * `lineCounter` in the options is filled as the yaml library's own functions fill it.
 */
export function readYamlLimited(
  text: string,
  options: ParseOptions & DocumentOptions & SchemaOptions,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
): YamlReadResult {
  const tooBig = sizeProblem(text, limits.maxBytes);
  if (tooBig !== undefined) return { ok: false, problem: tooBig };
  const lines = options.lineCounter ?? new LineCounter();
  const at = (offset: number): string => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return `line ${line}:${offset - before.lastIndexOf('\n')}`;
  };
  const streamed = tokenProblem(text, limits, at);
  if (streamed !== undefined) return { ok: false, problem: streamed };
  // Block nesting is a matter of indentation: the syntax tree (now of bounded size) tells it.
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  const problem = treeProblem(tokens, limits, at);
  if (problem !== undefined) return { ok: false, problem };
  // The library's warnings go to the documents' `warnings`, not to the process's stderr.
  const composer = new Composer({ logLevel: 'error', ...options, prettyErrors: false });
  const docs: Document.Parsed[] = Array.from(composer.compose(tokens));
  return { ok: true, docs };
}

/**
 * The nesting problem of a JSON text, if it nests deeper than `maxDepth` (JSON.parse itself
 * copes, but every later walk of the value recurses). Brackets inside strings do not count.
 */
export function jsonNestingProblem(text: string, maxDepth: number): string | undefined {
  let depth = 0;
  let inString = false;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      lineStart = i + 1;
    }
    if (inString) {
      if (c === 92) i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > maxDepth) return `nesting too deep at line ${line}:${i - lineStart + 1} (more than ${maxDepth} levels)`;
    } else if (c === 125 || c === 93) depth--;
  }
  return undefined;
}

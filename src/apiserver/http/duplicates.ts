/**
 * Duplicate fields in request bodies, which JSON.parse and the YAML composer resolve silently
 * (the last one wins): found here so that `fieldValidation` can refuse (Strict) or warn about
 * them (Warn), worded as upstream's decoders word them: `duplicate field "x"` for JSON,
 * `line 12: key "x" already set in map` for YAML.
 *
 * JSON bodies are checked cheaply first: the keys of the text are counted with a scan that
 * jumps from string to string, and compared with the keys of the parsed value; only a body whose
 * counts differ is scanned token by token to name its duplicates.
 */
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** The end of the JSON string that starts at `start` (the index of its closing quote). */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end > 0) {
    let backslashes = 0;
    for (let i = end - 1; text.charCodeAt(i) === 92; i--) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return text.length;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The number of object keys in a JSON text. */
function keysInText(text: string): number {
  let keys = 0;
  let pos = text.indexOf('"');
  while (pos >= 0 && pos < text.length) {
    const end = stringEnd(text, pos);
    let next = end + 1;
    while (next < text.length && isSpace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === 58) keys++;
    pos = text.indexOf('"', end + 1);
  }
  return keys;
}

function keysInValue(value: unknown): number {
  if (Array.isArray(value)) {
    let n = 0;
    for (const item of value) n += keysInValue(item);
    return n;
  }
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    n += 1 + keysInValue((value as Record<string, unknown>)[key]);
  }
  return n;
}

export interface JsonDuplicate {
  readonly key: string;
  /** 1 for the keys of the top-level object. */
  readonly depth: number;
}

/** Every repeated key of each object of the text, in text order (scanned token by token). */
function scanDuplicates(text: string): JsonDuplicate[] {
  const out: JsonDuplicate[] = [];
  // One entry per open container: the keys of an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123) stack.push(new Set());
    else if (c === 91) stack.push(null);
    else if (c === 125 || c === 93) stack.pop();
    else if (c === 34) {
      const end = stringEnd(text, i);
      let next = end + 1;
      while (next < text.length && isSpace(text.charCodeAt(next))) next++;
      const keys = stack[stack.length - 1];
      if (text.charCodeAt(next) === 58 && keys !== undefined && keys !== null) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) out.push({ key, depth: stack.length });
        keys.add(key);
      }
      i = end;
    }
  }
  return out;
}

/** The duplicate keys of a JSON text already parsed into `parsed` (none for most bodies, found cheaply). */
export function jsonDuplicates(text: string, parsed: unknown): JsonDuplicate[] {
  if (keysInText(text) === keysInValue(parsed)) return [];
  return scanDuplicates(text);
}

/** Upstream's wording of a JSON duplicate. */
export function jsonDuplicateMessage(d: JsonDuplicate): string {
  return `duplicate field ${JSON.stringify(d.key)}`;
}

/**
 * The duplicate keys of the maps of a YAML document, worded as Go's YAML decoder:
 * `line N: key "x" already set in map` (`lines` filled by the parse of the document).
 */
export function yamlDuplicates(doc: Document, lines: LineCounter): string[] {
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key;
        const name = isScalar(key) ? String(key.value) : String(key);
        if (seen.has(name)) {
          const offset = (key as Node | null)?.range?.[0] ?? 0;
          out.push(`line ${lines.linePos(offset).line}: key ${JSON.stringify(name)} already set in map`);
        }
        seen.add(name);
        walk(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) walk(item);
    }
  };
  walk(doc.contents);
  return out;
}

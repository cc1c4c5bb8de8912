/**
 * JSON Patch (RFC 6902): add, remove, replace, move, copy and test over JSON Pointers (RFC 6901,
 * `~0`/`~1` escapes, `-` for the end of an array). A malformed document throws PatchFormatError
 * (400); an operation that cannot apply (missing path, failed test) throws PatchApplyError (422).
 */
import { PatchApplyError, PatchFormatError, cloneJson, isJsonObject, jsonEqual } from './common.js';
import { quoteValue } from '../../api/quote.js';

interface Operation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

function parseOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new PatchFormatError('a JSON patch must be an array of operations');
  return patch.map((raw, i) => {
    if (!isJsonObject(raw)) throw new PatchFormatError(`operation ${i} is not an object`);
    const { op, path, from } = raw;
    if (typeof op !== 'string' || !OPS.has(op)) throw new PatchFormatError(`operation ${i}: unknown op ${quoteValue(op)}`);
    if (typeof path !== 'string') throw new PatchFormatError(`operation ${i}: missing path`);
    if ((op === 'move' || op === 'copy') && typeof from !== 'string') throw new PatchFormatError(`operation ${i} (${op}): missing from`);
    if ((op === 'add' || op === 'replace' || op === 'test') && !Object.hasOwn(raw, 'value')) {
      throw new PatchFormatError(`operation ${i} (${op}): missing value`);
    }
    return raw as unknown as Operation;
  });
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchFormatError(`invalid JSON pointer ${quoteValue(pointer)}: must start with /`);
  return pointer.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

type Container = Record<string, unknown> | unknown[];

/** The parent of the pointed value and the last token; throws when the parent is missing. */
function locate(doc: unknown, pointer: string): { parent: Container; key: string } {
  const parts = tokens(pointer);
  const key = parts.pop();
  if (key === undefined) throw new PatchApplyError(`the path ${quoteValue(pointer)} points to the whole document`);
  let node = doc;
  for (const part of parts) {
    node = child(node, part, pointer);
  }
  if (!Array.isArray(node) && !isJsonObject(node)) throw new PatchApplyError(`the parent of ${pointer} is not an object or array`);
  return { parent: node, key };
}

function index(array: unknown[], key: string, pointer: string, forInsert: boolean): number {
  if (forInsert && key === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw new PatchApplyError(`invalid array index ${quoteValue(key)} in ${pointer}`);
  const i = Number(key);
  if (i > array.length || (!forInsert && i === array.length)) throw new PatchApplyError(`array index ${i} out of range in ${pointer}`);
  return i;
}

function child(node: unknown, key: string, pointer: string): unknown {
  if (Array.isArray(node)) return node[index(node, key, pointer, false)];
  if (isJsonObject(node) && Object.hasOwn(node, key)) return node[key];
  throw new PatchApplyError(`the path ${quoteValue(pointer)} does not exist`);
}

function get(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const part of tokens(pointer)) node = child(node, part, pointer);
  return node;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value;
  const { parent, key } = locate(doc, pointer);
  if (Array.isArray(parent)) parent.splice(index(parent, key, pointer, true), 0, value);
  else parent[key] = value;
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  const { parent, key } = locate(doc, pointer);
  if (Array.isArray(parent)) {
    parent.splice(index(parent, key, pointer, false), 1);
  } else {
    if (!Object.hasOwn(parent, key)) throw new PatchApplyError(`the path ${quoteValue(pointer)} does not exist`);
    Reflect.deleteProperty(parent, key);
  }
  return doc;
}

/** Applies the operations to a copy of `document`. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  let doc = cloneJson(document);
  for (const op of parseOperations(patch)) {
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, cloneJson(op.value));
        break;
      case 'remove':
        doc = remove(doc, op.path);
        break;
      case 'replace':
        if (op.path !== '') get(doc, op.path);
        doc = op.path === '' ? cloneJson(op.value) : add(remove(doc, op.path), op.path, cloneJson(op.value));
        break;
      case 'move': {
        const from = op.from ?? '';
        if (op.path.startsWith(`${from}/`)) throw new PatchApplyError(`cannot move ${from} into its own child ${op.path}`);
        const value = get(doc, from);
        doc = add(remove(doc, from), op.path, value);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, cloneJson(get(doc, op.from ?? '')));
        break;
      case 'test':
        if (!jsonEqual(get(doc, op.path), op.value)) {
          throw new PatchApplyError(`testing value ${op.path} failed: it is ${quoteValue(get(doc, op.path))}, not ${quoteValue(op.value)}`);
        }
        break;
    }
  }
  return doc;
}

/**
 * Reads configuration documents (NodeagentConfiguration, its drop-ins, CredentialProviderConfig)
 * from disk: YAML or JSON (JSON is read as YAML, so both give positions), exactly one
 * document, apiVersion and kind checked, then decoded against the schema.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { LineCounter, isCollection } from 'yaml';
import { OrchError, messageOf } from '../../api/errors.js';
import { truncateText } from '../../api/quote.js';
import { readYamlLimited } from '../../api/yaml-limits.js';
import { decodeObject, type DecodeResult } from './decode.js';
import type { Schema } from './schema.js';
import { GROUP_VERSION } from './types.js';
import { compareCodeUnits } from '../../api/order.js';

export interface LoadedDocument extends DecodeResult {
  /** The absolute path read. */
  readonly path: string;
}

/** Resolves a path given on the command line: absolute, or relative to the working directory. */
export function resolveUserPath(path: string, cwd: string = process.cwd()): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : messageOf(err);
    throw new OrchError('CONFIG_FILE_UNREADABLE', 'invalid', `cannot read ${what} ${path}: ${why}`, {
      subject: path,
      cause: err,
    });
  }
}

/** Parses YAML/JSON text into a plain value and a position lookup; throws with file:line:col. */
export function parseConfigText(
  text: string,
  path: string,
): { value: unknown; positionOf: (p: readonly (string | number)[]) => string | undefined } {
  const lineCounter = new LineCounter();
  const read = readYamlLimited(text, { lineCounter, uniqueKeys: true, strict: true });
  if (!read.ok) throw new OrchError('CONFIG_FILE_MALFORMED', 'invalid', `${path}: ${read.problem}`, { subject: path });
  const doc = read.docs[0];
  if (doc === undefined) return { value: null, positionOf: () => undefined };
  if (read.docs.length > 1) {
    throw new OrchError('CONFIG_FILE_MALFORMED', 'invalid', `${path}: holds more than one YAML document; a configuration file holds exactly one`, {
      subject: path,
    });
  }
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lineCounter.linePos(first.pos[0]);
    const detail = truncateText(first.message.split('\n')[0] ?? first.message);
    throw new OrchError('CONFIG_FILE_MALFORMED', 'invalid', `${path}:${pos.line}:${pos.col}: malformed YAML or JSON: ${detail}`, {
      subject: path,
    });
  }
  // A second document after '---' is not part of the configuration.
  if (/^---\s*$/m.test(text.replace(/^---\s*\n/, ''))) {
    throw new OrchError('CONFIG_FILE_MALFORMED', 'invalid', `${path}: holds more than one YAML document; a configuration file holds exactly one`, {
      subject: path,
    });
  }
  return {
    value: doc.toJS({ maxAliasCount: 100 }) as unknown,
    positionOf: (p) => {
      const node = doc.getIn(p, true);
      const range = isCollection(node) || (node !== null && typeof node === 'object' && 'range' in node)
        ? (node as { range?: [number, number, number] }).range
        : undefined;
      if (range === undefined) return undefined;
      const pos = lineCounter.linePos(range[0]);
      return `${path}:${pos.line}:${pos.col}`;
    },
  };
}

/**
 * Reads and decodes one configuration document of `kind`. Throws OrchError (invalid) when the
 * file cannot be read or parsed, or when apiVersion/kind are wrong; field problems are returned
 * in `problems` so that all of them can be reported together.
 */
export async function loadDocument(path: string, schema: Schema, kind: string, what: string): Promise<LoadedDocument> {
  const text = await readText(path, what);
  const { value, positionOf } = parseConfigText(text, path);
  const header = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const problems: string[] = [];
  if (header.apiVersion !== GROUP_VERSION) {
    problems.push(
      `${path}: apiVersion must be ${GROUP_VERSION}, got ${header.apiVersion === undefined ? 'none' : JSON.stringify(header.apiVersion)}`,
    );
  }
  if (header.kind !== kind) {
    problems.push(`${path}: kind must be ${kind}, got ${header.kind === undefined ? 'none' : JSON.stringify(header.kind)}`);
  }
  const decoded = decodeObject(schema, value, { positionOf, ignore: ['apiVersion', 'kind'] });
  return {
    path,
    patch: decoded.patch,
    present: decoded.present,
    problems: [...problems, ...decoded.problems.map((p) => (p.startsWith(path) ? p : `${path}: ${p}`))],
    warnings: decoded.warnings.map((w) => (w.startsWith(path) ? w : `${path}: ${w}`)),
  };
}

/**
 * The drop-in files of a directory: `*.conf`, in lexical order of their names. A missing
 * directory is an error naming it.
 */
export async function listDropIns(dir: string): Promise<string[]> {
  try {
    const s = await stat(dir);
    if (!s.isDirectory()) {
      throw new OrchError('CONFIG_DROPIN_DIR', 'invalid', `--config-dir: drop-in directory ${dir} is not a directory`, { subject: dir });
    }
    const names = await readdir(dir);
    return names
      .filter((n) => n.endsWith('.conf') && !n.startsWith('.'))
      .sort(compareCodeUnits)
      .map((n) => join(dir, n));
  } catch (err) {
    if (err instanceof OrchError) throw err;
    throw new OrchError('CONFIG_DROPIN_DIR', 'invalid', `--config-dir: cannot read drop-in directory ${dir}: ${messageOf(err)}`, {
      subject: dir,
      cause: err,
    });
  }
}

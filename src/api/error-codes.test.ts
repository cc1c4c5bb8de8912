import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, ERROR_CODE_PREFIXES } from './error-codes.js';

/** The repository's src/ (this file runs from dist/src/api). */
const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('error-codes.ts') ? [path] : [];
  });
}

/** Wire names that look like codes: CSI's node capability VOLUME_MOUNT_GROUP. */
const NOT_CODES = new Set(['VOLUME_MOUNT_GROUP']);

void describe('the error code registry', () => {
  const pattern = new RegExp(`['"\`]((?:${ERROR_CODE_PREFIXES.join('|')})_[A-Z0-9_]+)['"\`]`, 'g');
  const used = new Map<string, string>();
  for (const file of sources(SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(pattern)) if (!NOT_CODES.has(m[1] ?? '')) used.set(m[1] ?? '', file);
  }

  void it('registers every code the source uses', () => {
    const missing = [...used.keys()].filter((c) => !(c in ERROR_CODES)).map((c) => `${c} (${used.get(c) ?? ''})`);
    assert.deepEqual(missing, [], 'codes used but not in src/api/error-codes.ts');
  });

  void it('lists no code the source does not use', () => {
    assert.deepEqual(Object.keys(ERROR_CODES).filter((c) => !used.has(c)), []);
  });
});

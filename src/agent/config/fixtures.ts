/**
 * Helpers for the configuration tests: temporary files, a short way to resolve a command
 * line, and the facts of the specification they check against (testdata/). Test-only; nothing
 * outside *.test.ts imports it.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDirs } from '../../../test/helpers/tempdir.js';
import { resolveConfiguration, ConfigurationError, type ResolvedConfiguration } from './resolve.js';

export const HEADER = 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\n';

const tempDir = tempDirs('nodeagent-config-');

/** A fresh temporary directory holding `files` (name -> text), removed after the test file's tests. */
export async function tempFiles(files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, text);
  }
  return dir;
}

/** Resolves `argv` in `cwd` with an empty environment (or `env`). */
export function resolveArgs(
  argv: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<ResolvedConfiguration> {
  return resolveConfiguration({ argv, env: options.env ?? {}, cwd: options.cwd ?? tmpdir(), version: 'v0.1.0' });
}

/** The problems of a command line that must fail; throws when it resolves. */
export async function problemsOf(
  argv: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<readonly string[]> {
  try {
    await resolveArgs(argv, options);
  } catch (err) {
    if (err instanceof ConfigurationError) return err.problems;
    throw err;
  }
  throw new Error(`expected ${argv.join(' ')} to be rejected`);
}

/**
 * The text of a fixture taken from the specification (src/agent/config/testdata/, kept in the
 * repository so that the tests need nothing beside it).
 */
export function specText(file: string): string {
  // dist/src/agent/config/fixtures.js -> the repository root is four levels up from dist/src/agent/config.
  const repo = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
  return readFileSync(join(repo, 'src', 'agent', 'config', 'testdata', file), 'utf8');
}

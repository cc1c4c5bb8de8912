/**
 * A checkpoint file under the agent's root directory (upstream: the checkpoint manager's file
 * store): read whole, written whole through a temporary file renamed into place, so that a crash
 * leaves the old or the new state, never half of one. Synchronous: the resource managers write
 * at admission, which the sync loop runs synchronously, and a state change is a few hundred bytes.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

import { OrchError, messageOf } from '../../../api/errors.js';

/** A checkpoint file cannot be read, parsed, verified or written. */
export const CM_CHECKPOINT_FAILED = 'CM_CHECKPOINT_FAILED';

export function checkpointError(path: string, message: string, cause?: unknown): OrchError {
  return new OrchError(CM_CHECKPOINT_FAILED, 'internal', `checkpoint ${path}: ${message}`, { subject: path, ...(cause === undefined ? {} : { cause }) });
}

/** The file's text, or undefined when there is none. */
export function readCheckpoint(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw checkpointError(path, `cannot read: ${messageOf(err)}`, err);
  }
}

export function writeCheckpoint(path: string, text: string): void {
  const temp = `${path}.tmp`;
  try {
    writeFileSync(temp, text, { mode: 0o644 });
    renameSync(temp, path);
  } catch (err) {
    throw checkpointError(path, `cannot write: ${messageOf(err)}`, err);
  }
}

/** Parses the JSON object of a checkpoint. Throws CM_CHECKPOINT_FAILED. */
export function parseCheckpoint(path: string, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw checkpointError(path, `not JSON: ${messageOf(err)}`, err);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw checkpointError(path, 'not a JSON object');
  return parsed as Record<string, unknown>;
}

/**
 * A field of a checkpoint object, matched without regard to case as Go's encoding/json does
 * (upstream's own test files write `defaultCPUSet` for the `defaultCpuSet` field).
 */
export function field(object: Readonly<Record<string, unknown>>, name: string): unknown {
  if (name in object) return object[name];
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(object)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/**
 * The agent's directories under --root-dir, made at start as upstream's kubelet makes them
 * (setupDataDirs): the root itself, `pods` (each pod's volumes and files), `plugins` and
 * `plugins_registry` (where device and CSI plugins would register) and `pod-resources`. The node
 * status reads the root's file system for ephemeral-storage capacity, so it must exist before
 * the first pod does.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { OrchError } from '../../api/errors.js';
import { StartupErrorCode } from './types.js';

export const DATA_DIRS = ['pods', 'plugins', 'plugins_registry', 'pod-resources'] as const;

/** Makes the root directory and its subdirectories (mode 0750; existing ones are left as they are). Throws STARTUP_DATA_DIRS. */
export async function ensureDataDirs(rootDir: string): Promise<void> {
  for (const dir of [rootDir, ...DATA_DIRS.map((d) => join(rootDir, d))]) {
    try {
      await mkdir(dir, { recursive: true, mode: 0o750 });
    } catch (err) {
      throw new OrchError(StartupErrorCode.DataDirs, 'unavailable', `cannot create the directory ${dir}`, { subject: '--root-dir', cause: err });
    }
  }
}

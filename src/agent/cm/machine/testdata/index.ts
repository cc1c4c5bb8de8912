/**
 * Recorded sysfs trees for the topology tests (imported by tests only), and a writer that lays
 * one out below a temporary directory, which the reader then takes as its sysRoot.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export { FOUR_NUMA_SYSFS } from './four-numa.js';
export { ONE_NUMA_SYSFS } from './one-numa.js';
export { TWO_NUMA_SYSFS } from './two-numa.js';

/** Writes `tree` (paths relative to /sys) below a new temporary directory and returns it. */
export async function writeSysfsTree(tree: Readonly<Record<string, string>>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cm-sysfs-'));
  for (const [path, content] of Object.entries(tree)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

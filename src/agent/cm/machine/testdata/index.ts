/**
 * Recorded sysfs trees for the topology tests (imported by tests only), a writer that lays one
 * out below a temporary directory (the reader's sysRoot), and the reading of one into a topology.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { readMachineTopology, type MachineTopology } from '../sysfs.js';

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

/** Lays `tree` out in a temporary directory, reads it, and removes the directory. */
export async function machineOf(tree: Readonly<Record<string, string>>): Promise<MachineTopology> {
  const root = await writeSysfsTree(tree);
  try {
    return await readMachineTopology({ sysRoot: root });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

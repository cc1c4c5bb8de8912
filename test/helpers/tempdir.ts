/**
 * Removing the temporary directories of tests safely. A node agent's root dir can hold its
 * pods' tmpfs mounts (emptyDir medium Memory, secret and projected volumes): the agent leaves
 * them when it stops, as upstream does. A recursive rm would delete through such a mount (and
 * then fail on the busy mount point), so every mount at or below the directory is unmounted
 * first, deepest first (lazily when busy); when one cannot be unmounted, the directory is left
 * in place with a message rather than deleted through the mount.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { promisify } from 'node:util';
import { isAtOrBelow, readMountInfo } from '../../src/agent/volumes/index.js';

const execFileAsync = promisify(execFile);

/** A memory file system every user may write to, where fsync costs nothing. */
const MEMORY_DIR = '/dev/shm';

function writableDirectory(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false; // absent or not ours: the caller falls back to the temp dir
  }
}

/**
 * Where unit tests keep files they sync (SQLite databases commit with an fsync each): /dev/shm
 * when it is a writable directory, so that the tests wait on no disk, else os.tmpdir(). The
 * durability itself is the integration lane's to check, on a real disk.
 */
export function syncedTmpdir(): string {
  return writableDirectory(MEMORY_DIR) ? MEMORY_DIR : tmpdir();
}

/** The mount points at or below `dir` (a real path), deepest first. */
async function mountsBelow(dir: string): Promise<string[]> {
  return (await readMountInfo()).map((m) => m.mountPoint).filter((m) => isAtOrBelow(m, dir)).sort().reverse();
}

/** Removes `dir` and everything in it, unmounting what is mounted below it first. Gone already: fine. */
export async function removeTempDir(dir: string): Promise<void> {
  const real = await realpath(dir).catch(() => undefined); // removed already
  if (real === undefined) return;
  for (const m of await mountsBelow(real)) {
    await execFileAsync('umount', [m]).catch(() => execFileAsync('umount', ['-l', m])).catch((err: unknown) => {
      process.stderr.write(`removeTempDir: cannot unmount ${m}: ${String(err)}\n`);
    });
  }
  const left = await mountsBelow(real);
  if (left.length > 0) {
    process.stderr.write(`removeTempDir: not removing ${dir}, still mounted below it: ${left.join(' ')}\n`);
    return;
  }
  await rm(dir, { recursive: true, force: true });
}

/**
 * A maker of fresh temporary directories named `<prefix>XXXXXX`, each removed (removeTempDir)
 * once the tests of the calling file (or describe, when called in one) have ended.
 */
export function tempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  after(async () => {
    for (const dir of made.splice(0)) await removeTempDir(dir);
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

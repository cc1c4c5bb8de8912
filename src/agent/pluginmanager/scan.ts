/**
 * The plugin sockets under the plugin registry directory, found by walking it (symbolic links
 * are not followed): every unix socket whose name does not start with '.', with an identity
 * that changes when the socket is made again (device, inode and change time), and the
 * directories walked (the watcher watches each).
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface ScannedSocket {
  readonly path: string;
  /** Changes when the socket is removed and made again. */
  readonly identity: string;
}

export interface Scan {
  readonly sockets: ReadonlyMap<string, ScannedSocket>;
  readonly dirs: readonly string[];
}

/** Walks `root`; an entry that vanishes while it is read is skipped. Rejects when `root` cannot be read. */
export async function scanPluginDir(root: string): Promise<Scan> {
  const sockets = new Map<string, ScannedSocket>();
  const dirs: string[] = [];
  const walk = async (dir: string, isRoot: boolean): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isRoot) throw err;
      return;
    }
    dirs.push(dir);
    for (const name of names.sort()) {
      const file = path.join(dir, name);
      const st = await lstat(file).catch(() => undefined);
      if (st === undefined) continue;
      if (st.isDirectory()) await walk(file, false);
      else if (st.isSocket() && !name.startsWith('.')) sockets.set(file, { path: file, identity: `${st.dev}:${st.ino}:${st.ctimeMs}` });
    }
  };
  await walk(root, true);
  return { sockets, dirs };
}

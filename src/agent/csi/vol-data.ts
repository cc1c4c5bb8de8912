/**
 * What the CSI plugin keeps on disk, as upstream's: `vol_data.json` beside each published
 * volume's `mount` directory (`<root-dir>/pods/<uid>/volumes/orch.io~csi/<name>/`), written
 * before the driver is called, so that teardown — after a restart too — knows the driver and the
 * handle of every volume a pod may have (upstream's reconstruction reads the same file); and the
 * global staging path of a volume, `<root-dir>/plugins/orch.io/csi/<driver>/<sha256>/globalmount`.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const CSI_POD_DIR = 'orch.io~csi';
export const VOL_DATA_FILE = 'vol_data.json';

export type VolumeLifecycleMode = 'Persistent' | 'Ephemeral';

/** The file beside each published volume's mount directory (upstream's keys). */
export interface VolData {
  /** The PersistentVolume's name, or the pod's volume name for an inline volume. */
  readonly specVolID: string;
  readonly volumeHandle: string;
  readonly driverName: string;
  readonly nodeName: string;
  readonly attachmentID: string;
  readonly volumeLifecycleMode: VolumeLifecycleMode;
}

export function stagingPath(rootDir: string, driver: string, volumeHandle: string): string {
  return join(rootDir, 'plugins', 'orch.io', 'csi', driver, createHash('sha256').update(volumeHandle).digest('hex'), 'globalmount');
}

/** Upstream's handle of an inline (ephemeral) volume: `csi-<sha256(pod UID + volume name)>`. */
export function inlineVolumeHandle(podUID: string, volumeName: string): string {
  return `csi-${createHash('sha256').update(`${podUID}${volumeName}`).digest('hex')}`;
}

/** The directory of a pod's CSI volume; `mount` below it is the target the driver publishes at. */
export function podVolumeDir(rootDir: string, podUID: string, specVolID: string): string {
  return join(rootDir, 'pods', podUID, 'volumes', CSI_POD_DIR, specVolID);
}

/** The file of `dir`, or undefined when it is missing or not JSON (a write the agent did not finish). */
export async function readVolData(dir: string): Promise<VolData | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, VOL_DATA_FILE), 'utf8')) as VolData;
  } catch {
    return undefined;
  }
}

/** Written to a temporary name and renamed: a kill mid-write never leaves half a file. */
export async function writeVolData(dir: string, data: VolData): Promise<void> {
  const tmp = join(dir, `.${VOL_DATA_FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(data));
  await rename(tmp, join(dir, VOL_DATA_FILE));
}

/** The CSI volume directories of a pod (none when the pod has no such directory). */
export async function podCsiDirs(rootDir: string, podUID: string): Promise<string[]> {
  const base = join(rootDir, 'pods', podUID, 'volumes', CSI_POD_DIR);
  try {
    return (await readdir(base)).map((name) => join(base, name));
  } catch {
    return [];
  }
}

/** True when a pod other than `podUID` has a volume of `driver` with `handle` on this node. */
export async function usedElsewhere(rootDir: string, podUID: string, driver: string, handle: string): Promise<boolean> {
  let pods: string[] = [];
  try {
    pods = await readdir(join(rootDir, 'pods'));
  } catch {
    return false;
  }
  for (const other of pods.filter((p) => p !== podUID)) {
    for (const dir of await podCsiDirs(rootDir, other)) {
      const data = await readVolData(dir);
      if (data?.driverName === driver && data.volumeHandle === handle) return true;
    }
  }
  return false;
}

/** Runs work one at a time per key (upstream runs one operation at a time per volume). */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined, // the caller of `run` receives the error; the chain only orders calls
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}

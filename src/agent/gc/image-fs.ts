/**
 * How full the image file system is: the file system holding the mount point the runtime's
 * ImageFsInfo names (containerd: `<root>/io.containerd.snapshotter.v1.<snapshotter>`), measured
 * with statfs as upstream's stats provider measures it (capacity and available bytes, not the
 * runtime's own `usedBytes`, which containerd 1.6 reports as 0 until it has walked its
 * snapshots). When the runtime names no mount point, its root directory (from the verbose CRI
 * status: containerd's `containerdRootDir`) is measured instead.
 */
import { statfs } from 'node:fs/promises';
import { OrchError, messageOf } from '../../api/errors.js';
import type { ImageService, RuntimeInfoService } from '../runtime/cri/index.js';
import { GC_IMAGE_FS_UNKNOWN } from './image-gc.js';
import { readRuntimeConfig } from './runtime-config.js';

export interface ImageFsUsage {
  readonly mountpoint: string;
  readonly capacityBytes: number;
  readonly availableBytes: number;
}

export interface ImageFsSourceOptions {
  readonly images: Pick<ImageService, 'imageFsInfo'>;
  readonly runtime: Pick<RuntimeInfoService, 'status'>;
  /** statfs of a path (default node's); tests give their own. */
  readonly statfs?: (path: string) => Promise<{ readonly blocks: number; readonly bavail: number; readonly bsize: number }>;
}

/** The image file system's mount point, looked up once it is found. Rejects with GC_IMAGE_FS_UNKNOWN while the runtime names none. */
export function imageFsMountpoint(o: Pick<ImageFsSourceOptions, 'images' | 'runtime'>): () => Promise<string> {
  let mountpoint: string | undefined;
  return async () => {
    if (mountpoint !== undefined) return mountpoint;
    const info = await o.images.imageFsInfo();
    let found = info.imageFilesystems[0]?.fsId?.mountpoint ?? '';
    if (found === '') found = (await readRuntimeConfig(o.runtime)).rootDir;
    if (found === '') throw new OrchError(GC_IMAGE_FS_UNKNOWN, 'internal', 'the runtime names no image file system (ImageFsInfo has no mount point, its status no root directory)');
    mountpoint = found;
    return found;
  };
}

/** A reader of the image file system's usage; the mount point is looked up once. */
export function imageFsSource(o: ImageFsSourceOptions): () => Promise<ImageFsUsage> {
  const measure = o.statfs ?? ((p: string) => statfs(p));
  const lookup = imageFsMountpoint(o);
  return async () => {
    const mountpoint = await lookup();
    let s;
    try {
      s = await measure(mountpoint);
    } catch (err) {
      throw new OrchError(GC_IMAGE_FS_UNKNOWN, 'internal', `cannot measure the image file system at ${mountpoint}: ${messageOf(err)}`, { subject: mountpoint, cause: err });
    }
    return { mountpoint, capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
  };
}

/**
 * Image garbage collection (upstream's realImageGCManager). Each pass first detects the images
 * (ListImages): an image seen for the first time is recorded with the time it was detected
 * (the very first detection records "long ago", as upstream's does), and every image a
 * container uses (ListContainers: any container, running or not, of the agent or not) or that
 * is a sandbox image gets "last used: now". Then, when the image file system is at or above
 * `highThresholdPercent` full, the images not in use and not pinned are removed, least recently
 * used first (ties: first detected first), skipping those detected less than `minAgeMs` ago,
 * until the freed bytes (the sizes the runtime reports) bring it down to
 * `lowThresholdPercent`. Freeing less than that is an error: GC_IMAGE_FREE_FAILED, "wanted to
 * free X bytes, but freed Y bytes".
 */
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { ContainerService, ImageService } from '../runtime/cri/index.js';
import type { ImageFsUsage } from './image-fs.js';

/** The image GC could not free enough space (GC_IMAGE_FREE_FAILED) or measure the image file system (GC_IMAGE_FS_UNKNOWN). */
export const GC_IMAGE_FREE_FAILED = 'GC_IMAGE_FREE_FAILED';
export const GC_IMAGE_FS_UNKNOWN = 'GC_IMAGE_FS_UNKNOWN';

export interface ImageGCPolicy {
  /** imageGCHighThresholdPercent: at or above this usage of the image file system, images go. */
  readonly highThresholdPercent: number;
  /** imageGCLowThresholdPercent: what a pass frees down to. */
  readonly lowThresholdPercent: number;
  /** imageMinimumGCAge in ms: images detected more recently stay. */
  readonly minAgeMs: number;
}

export interface ImageGCOptions {
  readonly images: Pick<ImageService, 'listImages' | 'removeImage' | 'imageStatus'>;
  readonly containers: Pick<ContainerService, 'listContainers'>;
  /** The image file system's capacity and available bytes. */
  readonly imageFs: () => Promise<ImageFsUsage>;
  /** References of the images never removed: --pod-infra-container-image and the runtime's sandbox image. */
  readonly sandboxImages: () => Promise<readonly string[]>;
  readonly policy: ImageGCPolicy;
  readonly now: () => number;
  readonly logger: Logger;
  /** Told each image removed (as it goes: a pass that fails has removed some too). */
  readonly onRemoved?: (id: string) => void;
}

/** What one pass saw and did. */
export interface ImageGCResult {
  /** Usage of the image file system when the pass began, in percent. */
  readonly usagePercent: number;
  /** Bytes the pass wanted to free (0 below the high threshold). */
  readonly wanted: number;
  readonly freed: number;
  /** IDs of the images removed, in the order they went. */
  readonly removed: readonly string[];
}

export interface ImageGC {
  /** One pass: detection, then removals when the file system is over the high threshold. */
  collect(): Promise<ImageGCResult>;
  /**
   * Detection, then every image not in use, not pinned and not younger than the minimum age is
   * removed whatever the thresholds (upstream's DeleteUnusedImages, the eviction manager's
   * reclaim under disk pressure). Never fails for freeing too little.
   */
  deleteUnused(): Promise<ImageGCResult>;
}

interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
  pinned: boolean;
}

class ImageCollector implements ImageGC {
  private readonly records = new Map<string, ImageRecord>();
  private initialized = false;

  constructor(private readonly o: ImageGCOptions) {}

  /** The IDs of the sandbox images present (an absent one is no error). */
  private async sandboxImageIds(): Promise<string[]> {
    const ids: string[] = [];
    for (const ref of await this.o.sandboxImages()) {
      try {
        const id = (await this.o.images.imageStatus({ image: { image: ref } })).image?.id;
        if (id !== undefined && id !== '') ids.push(id);
      } catch (err) {
        this.o.logger.v(3, 'Cannot read the status of a sandbox image', { image: ref, err: messageOf(err) });
      }
    }
    return ids;
  }

  /** Updates the records; resolves to the IDs and references in use now. */
  private async detect(detectTime: number): Promise<Set<string>> {
    const [images, containers, sandboxIds] = await Promise.all([this.o.images.listImages(), this.o.containers.listContainers(), this.sandboxImageIds()]);
    const inUse = new Set<string>(sandboxIds);
    for (const c of containers) {
      if (c.imageRef !== '') inUse.add(c.imageRef);
      if (c.image?.image !== undefined && c.image.image !== '') inUse.add(c.image.image);
    }
    const now = this.o.now();
    const present = new Set<string>();
    for (const image of images) {
      present.add(image.id);
      let record = this.records.get(image.id);
      if (record === undefined) {
        record = { firstDetected: detectTime, lastUsed: 0, size: 0, pinned: false };
        this.records.set(image.id, record);
      }
      const used = [image.id, ...image.repoTags, ...image.repoDigests].some((name) => inUse.has(name));
      if (used) {
        record.lastUsed = now;
        inUse.add(image.id);
      }
      record.size = Number(image.size);
      record.pinned = image.pinned;
    }
    for (const id of this.records.keys()) if (!present.has(id)) this.records.delete(id);
    return inUse;
  }

  async collect(): Promise<ImageGCResult> {
    const { policy, logger } = this.o;
    const freeTime = this.o.now();
    const inUse = await this.detectOnce(freeTime);
    const fs = await this.o.imageFs();
    const capacity = fs.capacityBytes;
    const available = Math.min(fs.availableBytes, capacity);
    if (!(capacity > 0)) {
      throw new OrchError(GC_IMAGE_FS_UNKNOWN, 'internal', `invalid capacity ${capacity} on the image file system ${fs.mountpoint}`, { subject: fs.mountpoint });
    }
    const usagePercent = 100 - Math.floor((available * 100) / capacity);
    if (usagePercent < policy.highThresholdPercent) return { usagePercent, wanted: 0, freed: 0, removed: [] };
    const wanted = Math.floor((capacity * (100 - policy.lowThresholdPercent)) / 100) - available;
    logger.info('Disk usage on the image file system is over the high threshold, freeing images down to the low threshold', {
      mountpoint: fs.mountpoint, usage: usagePercent, highThreshold: policy.highThresholdPercent, lowThreshold: policy.lowThresholdPercent, bytesToFree: wanted,
    });
    const { freed, removed, errors } = await this.free(wanted, inUse, freeTime);
    if (freed < wanted) {
      const detail = errors.length === 0 ? '' : ` (removals failed: ${errors.join('; ')})`;
      throw new OrchError(GC_IMAGE_FREE_FAILED, 'internal', `image garbage collection on ${fs.mountpoint}: wanted to free ${wanted} bytes, but freed ${freed} bytes${detail}`, {
        subject: fs.mountpoint,
      });
    }
    return { usagePercent, wanted, freed, removed };
  }

  async deleteUnused(): Promise<ImageGCResult> {
    const freeTime = this.o.now();
    const inUse = await this.detectOnce(freeTime);
    this.o.logger.info('Attempting to delete unused images');
    const { freed, removed, errors } = await this.free(Number.POSITIVE_INFINITY, inUse, freeTime);
    if (errors.length > 0) this.o.logger.warn('Some unused images could not be removed', { errors });
    return { usagePercent: 0, wanted: freed, freed, removed };
  }

  /** Detection; the very first dates what was there before the agent started to "long ago". */
  private async detectOnce(freeTime: number): Promise<Set<string>> {
    const inUse = await this.detect(this.initialized ? freeTime : 0);
    this.initialized = true;
    return inUse;
  }

  /** Removes unused images, least recently used first, until `wanted` bytes are freed. */
  private async free(wanted: number, inUse: ReadonlySet<string>, freeTime: number): Promise<{ freed: number; removed: string[]; errors: string[] }> {
    const { policy, logger } = this.o;
    const candidates = [...this.records.entries()]
      .filter(([id, r]) => !inUse.has(id) && !r.pinned)
      .sort(([, a], [, b]) => (a.lastUsed === b.lastUsed ? a.firstDetected - b.firstDetected : a.lastUsed - b.lastUsed));
    const removed: string[] = [];
    const errors: string[] = [];
    let freed = 0;
    for (const [id, record] of candidates) {
      if (freed >= wanted) break;
      if (record.lastUsed >= freeTime) continue; // used during this pass
      if (freeTime - record.firstDetected < policy.minAgeMs) {
        logger.v(4, 'Image is younger than the minimum age; kept', { imageID: id });
        continue;
      }
      logger.info('Removing an image to free space', { imageID: id, size: record.size });
      try {
        await this.o.images.removeImage({ image: id });
      } catch (err) {
        errors.push(`${id}: ${messageOf(err)}`);
        continue;
      }
      this.records.delete(id);
      removed.push(id);
      this.o.onRemoved?.(id);
      freed += record.size;
    }
    return { freed, removed, errors };
  }
}

export function createImageGC(options: ImageGCOptions): ImageGC {
  return new ImageCollector(options);
}

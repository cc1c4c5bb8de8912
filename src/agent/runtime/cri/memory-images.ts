/**
 * The image half of the in-memory runtime (MemoryRuntime extends it): images present by reference, a
 * registry PullImage fetches from, and the image filesystem's usage. As containerd: an image
 * is found by any of its references or by its ID, RemoveImage removes every reference of the
 * image, and ListImages ignores its filter. Used by the tests and by the simulated nodes.
 */
import { MemoryCalls, notFound } from './memory-calls.js';
import type { ImageService } from './services.js';
import type { ImageSpec } from './types-common.js';
import type { Image, ImageFsInfoResponse, ImageStatusRequest, ImageStatusResponse, PullImageRequest } from './types-stats-image.js';

/** The image filesystem's usage ImageFsInfo reports. */
export interface MemoryImageFs {
  mountpoint: string;
  usedBytes: number;
  inodesUsed: number;
}

export class MemoryImageService extends MemoryCalls implements ImageService {
  /** Image references present, mapped to their IDs (several references may share an ID). */
  readonly images = new Map<string, string>();
  /** References that PullImage can fetch, mapped to their IDs. */
  readonly registry = new Map<string, string>();
  /** Every reference can be pulled (an ID made from the reference), as if the registry had them all. */
  pullAnything = false;
  readonly imageFs: MemoryImageFs = { mountpoint: '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs', usedBytes: 0, inodesUsed: 0 };

  /** The ID of the image present as `image` (a reference or an ID). */
  protected imageIdOf(image: string): string | undefined {
    return this.images.get(image) ?? ([...this.images.values()].includes(image) ? image : undefined);
  }

  /** The references of the present image `id`, in the order they were added. */
  protected tagsOf(id: string): string[] {
    return [...this.images].filter(([, v]) => v === id).map(([ref]) => ref);
  }

  private describe(id: string): Image {
    return { id, repoTags: this.tagsOf(id), repoDigests: [], size: '1', uid: { value: '0' }, username: '', spec: null, pinned: false, imageSource: '' };
  }

  /** Every image, whatever the filter (containerd 1.6 ignores it). */
  listImages(filter?: ImageSpec): Promise<Image[]> {
    return this.answer('listImages', filter, () => [...new Set(this.images.values())].map((id) => this.describe(id)));
  }

  imageStatus(request: ImageStatusRequest): Promise<ImageStatusResponse> {
    return this.answer('imageStatus', request, () => {
      const id = this.imageIdOf(request.image.image);
      return { image: id === undefined ? null : this.describe(id), info: {} };
    });
  }

  /** Fails as containerd does for a reference the registry lacks. */
  pullImage(request: PullImageRequest): Promise<string> {
    return this.answer('pullImage', request, () => {
      const ref = request.image.image;
      const id = this.registry.get(ref) ?? (this.pullAnything ? `sha256:${Buffer.from(ref).toString('hex').padEnd(64, '0').slice(0, 64)}` : undefined);
      if (id === undefined) throw notFound(`failed to resolve reference "${ref}": ${ref}`);
      this.images.set(ref, id);
      return id;
    });
  }

  /** Removes the image and every reference of it; an absent image is no error. */
  removeImage(image: ImageSpec): Promise<void> {
    return this.answer('removeImage', image, () => {
      const id = this.imageIdOf(image.image);
      if (id === undefined) return;
      for (const ref of this.tagsOf(id)) this.images.delete(ref);
    });
  }

  imageFsInfo(): Promise<ImageFsInfoResponse> {
    return this.answer('imageFsInfo', undefined, () => {
      const { mountpoint, usedBytes, inodesUsed } = this.imageFs;
      return {
        imageFilesystems: [{ timestamp: String(this.tick()), fsId: { mountpoint }, usedBytes: { value: String(usedBytes) }, inodesUsed: { value: String(inodesUsed) } }],
        containerFilesystems: [],
      };
    });
  }
}

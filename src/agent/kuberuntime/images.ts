/**
 * The image puller (upstream: imageManager.EnsureImageExists): makes sure a container's image
 * is present before the container is created, by its pull policy:
 *
 *   | policy       | image present  | image absent                                       |
 *   |--------------|----------------|----------------------------------------------------|
 *   | Always       | pull           | pull                                               |
 *   | IfNotPresent | use it         | pull                                               |
 *   | Never        | use it         | ErrImageNeverPull                                  |
 *
 * ImageStatus is asked first (containerd contacts the registry on every PullImage). A failed
 * pull is ErrImagePull and starts a back-off per pod and image (10 s doubling to 5 min);
 * while it holds, the container waits with ImagePullBackOff without pulling. An invalid
 * reference is InvalidImageName. Pulls go through the slots (serialized by default) and the
 * QPS bucket; the same image pulled for two pods at once is pulled once.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { Image, PodSandboxConfig } from '../runtime/cri/index.js';
import { BackOff, type BackOffSettings } from './backoff.js';
import { needsImageUser } from './container-config.js';
import { isRuntimeUnreachable } from './errors.js';
import { applyDefaultImageTag, defaultPullPolicy } from './image-reference.js';
import type { ManagerImages } from './options.js';
import { PullSlots, TokenBucket } from './pull-limits.js';
import type { ContainerWaitingReason } from './types.js';

export type ImageFailureReason = Extract<ContainerWaitingReason, 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName' | 'ImageInspectError'>;

export type EnsureImageResult =
  | { readonly ok: true; readonly imageRef: string; readonly uid?: number; readonly username: string }
  | { readonly ok: false; readonly reason: ImageFailureReason; readonly message: string; readonly retryAfterMs?: number };

export interface ImagePullerOptions {
  readonly images: ManagerImages;
  readonly logger: Logger;
  readonly now: () => number;
  readonly serialize: boolean;
  /** Only when not serialized; 0: no limit. */
  readonly maxParallel: number;
  readonly qps: number;
  readonly burst: number;
  readonly backOff: BackOffSettings;
}

/** The image's user (upstream getImageUser): its UID, else its user name, else root (UID 0). */
function userOf(image: Image): { uid?: number; username: string } {
  if (image.uid !== null) return { uid: Number(image.uid.value), username: '' };
  return image.username === '' ? { uid: 0, username: '' } : { username: image.username };
}

export class ImagePuller {
  private readonly slots: PullSlots;
  private readonly bucket: TokenBucket;
  private readonly backOff: BackOff;
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly options: ImagePullerOptions) {
    this.slots = new PullSlots(options.serialize ? 1 : Math.max(0, options.maxParallel));
    this.bucket = new TokenBucket(options.qps, options.burst, options.now);
    this.backOff = new BackOff(options.backOff, options.now);
  }

  /**
   * Resolves to the image reference to create the container with, or to the reason it cannot
   * be had. Rejects only when the image service is unreachable.
   */
  async ensureImage(pod: Pod, container: Container, sandboxConfig: PodSandboxConfig): Promise<EnsureImageResult> {
    const specImage = container.image ?? '';
    let image: string;
    try {
      image = applyDefaultImageTag(specImage);
    } catch (err) {
      return { ok: false, reason: 'InvalidImageName', message: `Failed to apply default image tag ${JSON.stringify(specImage)}: ${messageOf(err)}` };
    }
    let present: Image | null;
    try {
      present = (await this.options.images.imageStatus({ image: { image } })).image;
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      return { ok: false, reason: 'ImageInspectError', message: `Failed to inspect image ${JSON.stringify(specImage)}: ${messageOf(err)}` };
    }
    const policy = container.imagePullPolicy ?? defaultPullPolicy(specImage);
    const pull = policy === 'Always' || (policy !== 'Never' && present === null);
    if (!pull) {
      if (present !== null) return { ok: true, imageRef: present.id, ...userOf(present) };
      return { ok: false, reason: 'ErrImageNeverPull', message: `Container image ${JSON.stringify(specImage)} is not present with pull policy of Never` };
    }
    const key = `${pod.metadata?.uid ?? ''}_${specImage}`;
    const left = this.backOff.remainingSinceUpdate(key);
    if (left > 0) return { ok: false, reason: 'ImagePullBackOff', message: `Back-off pulling image ${JSON.stringify(specImage)}`, retryAfterMs: left };
    const started = this.options.now();
    let imageRef: string;
    try {
      imageRef = await this.pull(image, sandboxConfig);
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      this.backOff.next(key, this.options.now());
      this.options.logger.warn('failed to pull image', { image: specImage, pod: pod.metadata?.name, err: messageOf(err) });
      return { ok: false, reason: 'ErrImagePull', message: `Failed to pull image ${JSON.stringify(specImage)}: ${messageOf(err)}`, retryAfterMs: this.backOff.get(key) };
    }
    this.backOff.gc();
    this.options.logger.v(2, 'pulled image', { image: specImage, imageRef, ms: this.options.now() - started });
    const status = needsImageUser(pod, container) ? (await this.options.images.imageStatus({ image: { image: imageRef } })).image : null;
    return { ok: true, imageRef, ...(status === null ? { username: '' } : userOf(status)) };
  }

  /** Forgets the back-offs of a removed pod. */
  forgetPod(uid: string): void {
    this.backOff.forgetPrefix(`${uid}_`);
  }

  private pull(image: string, sandboxConfig: PodSandboxConfig): Promise<string> {
    const running = this.inFlight.get(image);
    if (running !== undefined) return running;
    const pulling = this.slots
      .run(() => {
        if (!this.bucket.tryAccept()) return Promise.reject(new Error('pull QPS exceeded'));
        return this.options.images.pullImage({ image: { image }, sandboxConfig });
      })
      .finally(() => this.inFlight.delete(image));
    this.inFlight.set(image, pulling);
    return pulling;
  }
}

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
 * ImageStatus is asked first (containerd contacts the registry on every PullImage); pods asking
 * about the same image at the same time share the call. A failed
 * pull is ErrImagePull and starts a back-off per pod and image (10 s doubling to 5 min);
 * while it holds, the container waits with ImagePullBackOff without pulling. An invalid
 * reference is InvalidImageName. Pulls go through the slots (serialized by default) and the
 * QPS bucket; the same image pulled for two pods at once is pulled once.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { PodEvent } from '../prober/index.js';
import type { AuthConfig, Image, PodSandboxConfig } from '../runtime/cri/index.js';
import type { Clock } from '../../api/clock.js';
import type { TokenBucket } from '../../api/token-bucket.js';
import { traced, type Tracer } from '../../api/tracing/index.js';
import { BackOff, type BackOffSettings } from './backoff.js';
import { needsImageUser } from './container-config.js';
import { isRuntimeUnreachable } from './errors.js';
import { applyDefaultImageTag, defaultPullPolicy, repositoryToPull } from './image-reference.js';
import type { ManagerImages } from './options.js';
import { pullBudget, PullSlots } from './pull-limits.js';
import type { ContainerWaitingReason } from './types.js';
import type { NodePod } from '../../api/pod/index.js';
import { quoteValue } from '../../api/quote.js';

export type ImageFailureReason = Extract<ContainerWaitingReason, 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName' | 'ImageInspectError'>;

export type EnsureImageResult =
  | { readonly ok: true; readonly imageRef: string; readonly uid?: number; readonly username: string }
  | { readonly ok: false; readonly reason: ImageFailureReason; readonly message: string; readonly retryAfterMs?: number };

/** What a pull may use from its caller: where its events go and the registry credentials. */
export interface PullHooks {
  readonly emit?: (event: PodEvent) => void;
  /**
   * The credentials for pulling from `repository` (`host[:port]/path`, no tag: the pod's pull
   * secrets, then the credential provider plugins'), tried in turn; none: an anonymous pull.
   */
  readonly auth?: (repository: string) => Promise<readonly AuthConfig[]>;
  /** Told when a pull begins (it may take minutes). */
  readonly onPull?: () => void;
}

export interface ImagePullerOptions {
  readonly images: ManagerImages;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly serialize: boolean;
  /** Only when not serialized; 0: no limit. */
  readonly maxParallel: number;
  /** registryPullQPS: 0 is no limit. */
  readonly qps: number;
  /** registryBurst: below 1 it is 1. */
  readonly burst: number;
  readonly backOff: BackOffSettings;
  /** Each pull in a span (`pullImage`: credentials tried in turn, the CRI PullImage calls its children). */
  readonly tracer?: Tracer | undefined;
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
  /** ImageStatus calls under way, per reference: asked for the same image at once, they share one call. */
  private readonly inspecting = new Map<string, Promise<Image | null>>();

  constructor(private readonly options: ImagePullerOptions) {
    this.slots = new PullSlots(options.serialize ? 1 : Math.max(0, options.maxParallel));
    this.bucket = pullBudget(options.qps, options.burst, options.clock);
    this.backOff = new BackOff(options.backOff, options.clock);
  }

  /**
   * Resolves to the image reference to create the container with, or to the reason it cannot
   * be had. Rejects only when the image service is unreachable.
   */
  async ensureImage(pod: NodePod, container: Container, sandboxConfig: PodSandboxConfig, hooks: PullHooks = {}): Promise<EnsureImageResult> {
    const emit = (type: 'Normal' | 'Warning', reason: string, message: string): void => {
      hooks.emit?.({ type, reason, message, pod, container: container.name });
    };
    const specImage = container.image ?? '';
    let image: string;
    try {
      image = applyDefaultImageTag(specImage);
    } catch (err) {
      // As upstream: the InspectFailed event, the container waiting with InvalidImageName.
      const message = `Failed to apply default image tag ${quoteValue(specImage)}: ${messageOf(err)}`;
      emit('Warning', 'InspectFailed', message);
      return { ok: false, reason: 'InvalidImageName', message };
    }
    let present: Image | null;
    try {
      present = await this.inspect(image);
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      const message = `Failed to inspect image ${quoteValue(specImage)}: ${messageOf(err)}`;
      emit('Warning', 'InspectFailed', message);
      return { ok: false, reason: 'ImageInspectError', message };
    }
    const policy = container.imagePullPolicy ?? defaultPullPolicy(specImage);
    const pull = policy === 'Always' || (policy !== 'Never' && present === null);
    if (!pull) {
      if (present !== null) {
        emit('Normal', 'Pulled', `Container image ${quoteValue(specImage)} already present on machine`);
        return { ok: true, imageRef: present.id, ...userOf(present) };
      }
      const message = `Container image ${quoteValue(specImage)} is not present with pull policy of Never`;
      emit('Warning', 'ErrImageNeverPull', message);
      return { ok: false, reason: 'ErrImageNeverPull', message };
    }
    const key = `${pod.metadata.uid}_${specImage}`;
    const left = this.backOff.remainingSinceUpdate(key);
    if (left > 0) {
      const message = `Back-off pulling image ${quoteValue(specImage)}`;
      emit('Normal', 'BackOff', message);
      return { ok: false, reason: 'ImagePullBackOff', message, retryAfterMs: left };
    }
    const started = this.options.clock.now();
    hooks.onPull?.();
    emit('Normal', 'Pulling', `Pulling image ${quoteValue(specImage)}`);
    let imageRef: string;
    try {
      const auths = (await hooks.auth?.(repositoryToPull(image))) ?? [];
      imageRef = await traced(this.options.tracer, 'pullImage', {
        attributes: { 'container.image.name': image, 'k8s.pod.uid': pod.metadata.uid, 'k8s.container.name': container.name, 'pull.credentials': auths.length },
      }, () => this.pullWithEach(image, sandboxConfig, auths));
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      this.backOff.next(key, this.options.clock.now());
      this.options.logger.warn('failed to pull image', { image: specImage, pod: pod.metadata.name, err: messageOf(err) });
      const message = `Failed to pull image ${quoteValue(specImage)}: ${messageOf(err)}`;
      emit('Warning', 'Failed', message);
      return { ok: false, reason: 'ErrImagePull', message, retryAfterMs: this.backOff.get(key) };
    }
    this.backOff.gc();
    const ms = this.options.clock.now() - started;
    this.options.logger.v(2, 'pulled image', { image: specImage, imageRef, ms });
    emit('Normal', 'Pulled', `Successfully pulled image ${quoteValue(specImage)} in ${(ms / 1000).toFixed(3)}s`);
    const status = needsImageUser(pod, container) ? (await this.options.images.imageStatus({ image: { image: imageRef } })).image : null;
    return { ok: true, imageRef, ...(status === null ? { username: '' } : userOf(status)) };
  }

  /** Forgets the back-offs of a removed pod. */
  forgetPod(uid: string): void {
    this.backOff.forgetPrefix(`${uid}_`);
  }

  /** ImageStatus of `image`; a call for the same reference already under way is shared (a burst of pods of one image asks once per round trip, not once per pod). */
  private inspect(image: string): Promise<Image | null> {
    const running = this.inspecting.get(image);
    if (running !== undefined) return running;
    const inspecting = this.options.images
      .imageStatus({ image: { image } })
      .then((r) => r.image)
      .finally(() => this.inspecting.delete(image));
    this.inspecting.set(image, inspecting);
    return inspecting;
  }

  /**
   * Pulls with each credential in turn until one works (upstream tries every credential the
   * keyring holds for the repository); anonymously when there is none. Fails with every error.
   */
  private async pullWithEach(image: string, sandboxConfig: PodSandboxConfig, auths: readonly AuthConfig[]): Promise<string> {
    if (auths.length === 0) return this.pull(image, sandboxConfig, undefined);
    const errors: unknown[] = [];
    for (const auth of auths) {
      try {
        return await this.pull(image, sandboxConfig, auth);
      } catch (err) {
        if (isRuntimeUnreachable(err)) throw err;
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    throw new Error(`[${errors.map((e) => messageOf(e)).join(', ')}]`);
  }

  private pull(image: string, sandboxConfig: PodSandboxConfig, auth: AuthConfig | undefined): Promise<string> {
    // Pulls of one image share the request only when they use the same credentials.
    const key = auth === undefined ? image : `${image}\u0000${JSON.stringify(auth)}`;
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const pulling = this.slots
      .run(() => {
        if (!this.bucket.tryTake()) return Promise.reject(new Error('pull QPS exceeded'));
        return this.options.images.pullImage({ image: { image }, sandboxConfig, ...(auth === undefined ? {} : { auth }) });
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, pulling);
    return pulling;
  }
}

/**
 * The pod config (upstream's PodConfig): the configured sources (the manifest path, the
 * manifest URL, and any source that pushes on its own, such as the API server's) merged
 * into one stream of typed updates.
 */
import type { Clock } from '../../api/clock.js';
import { FILE_SOURCE, HTTP_SOURCE, type NodePod } from '../../api/pod/index.js';
import type { TraceParents, Tracer } from '../../api/tracing/index.js';
import { FileSource } from './file-source.js';
import { PodMerger } from './merger.js';
import type { PodSource, PodUpdate, PodUpdateListener, SourceLogger } from './types.js';
import { UrlSource } from './url-source.js';

export interface PodConfig {
  /**
   * Adds a listener of updates. The current pods are replayed to it first (one ADD per
   * source that has any), synchronously; then each update is delivered synchronously, in
   * subscription order, as sources push. Listeners must not block or change the pods; one
   * that throws is logged. Returns the unsubscribe function.
   */
  subscribe(listener: PodUpdateListener): () => void;
  /**
   * Replaces a source's pods with `pods` (SET semantics) and emits the differences before
   * returning. For sources that deliver on their own (the API server's): declare them in
   * `pushSources`. Ignored after stop(). Throws OrchError PODSOURCE_UNKNOWN_SOURCE for an
   * undeclared source.
   */
  pushSnapshot(source: string, pods: readonly NodePod[]): void;
  /** True once every configured source delivered its first snapshot; before that the agent must not remove orphaned pods. */
  sourcesReady(): boolean;
  /** Starts the file and URL sources; resolves after each made its first attempt. Idempotent. */
  start(): Promise<void>;
  /** Stops the sources (timers, watchers, requests) and the updates. Idempotent. */
  stop(): Promise<void>;
}

export interface PodConfigOptions {
  readonly nodeName: string;
  /** `--pod-manifest-path` ('' for none). */
  readonly staticPodPath: string;
  readonly fileCheckFrequencyMs: number;
  /** `--manifest-url` ('' for none). */
  readonly staticPodURL: string;
  readonly staticPodURLHeader: Readonly<Record<string, readonly string[]>>;
  readonly httpCheckFrequencyMs: number;
  readonly logger: SourceLogger;
  /** The sources' timers (re-list, poll) and the first-seen annotations. */
  readonly clock: Clock;
  /** Sources that push through pushSnapshot (e.g. 'api'); sourcesReady() waits for them too. */
  readonly pushSources?: readonly string[];
  /**
   * Tracing: each pod an update names gets a span (`podUpdate`, with the source and the
   * operation), left in `parents` under the pod's UID for the pod's next sync to continue.
   */
  readonly tracing?: { readonly tracer: Tracer; readonly parents: TraceParents };
}

class DefaultPodConfig implements PodConfig {
  private readonly merger: PodMerger;
  private readonly sources: PodSource[] = [];
  private starting: Promise<void> | undefined;
  private stopped = false;

  constructor(options: PodConfigOptions) {
    const names = [...(options.pushSources ?? [])];
    const { clock } = options;
    if (options.staticPodPath !== '') {
      names.push(FILE_SOURCE);
      this.sources.push(
        new FileSource({
          path: options.staticPodPath,
          nodeName: options.nodeName,
          checkIntervalMs: options.fileCheckFrequencyMs,
          onSnapshot: (pods) => {
            this.merger.pushSnapshot(FILE_SOURCE, pods);
          },
          logger: options.logger,
          clock,
        }),
      );
    }
    if (options.staticPodURL !== '') {
      names.push(HTTP_SOURCE);
      this.sources.push(
        new UrlSource({
          url: options.staticPodURL,
          headers: options.staticPodURLHeader,
          nodeName: options.nodeName,
          checkIntervalMs: options.httpCheckFrequencyMs,
          onSnapshot: (pods) => {
            this.merger.pushSnapshot(HTTP_SOURCE, pods);
          },
          logger: options.logger,
          clock,
        }),
      );
    }
    this.merger = new PodMerger({ sources: names, logger: options.logger, clock });
    const tracing = options.tracing;
    // Subscribed first: the span is left before any other listener (the sync loop) sees the update.
    if (tracing !== undefined) this.merger.subscribe((update) => { tracePodUpdate(tracing, update); });
  }

  subscribe(listener: PodUpdateListener): () => void {
    return this.merger.subscribe(listener);
  }

  pushSnapshot(source: string, pods: readonly NodePod[]): void {
    this.merger.pushSnapshot(source, pods);
  }

  sourcesReady(): boolean {
    return this.merger.sourcesReady();
  }

  start(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.starting ??= Promise.all(this.sources.map((s) => s.start())).then(() => undefined);
    return this.starting;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.sources.map((s) => s.stop()));
    this.merger.close();
  }
}

/** A span per pod of an update that changes what runs (not RECONCILE: status only), as the parent of the pod's next sync. */
function tracePodUpdate(tracing: NonNullable<PodConfigOptions['tracing']>, update: PodUpdate): void {
  if (update.op === 'RECONCILE') return;
  for (const pod of update.pods) {
    const { uid, name, namespace } = pod.metadata;
    const parent = tracing.tracer.point('podUpdate', {
      parent: 'root',
      attributes: { 'k8s.pod.uid': uid, 'k8s.pod.name': name, 'k8s.namespace.name': namespace, 'pod.source': update.source, 'pod.update.operation': update.op },
    });
    tracing.parents.set(uid, parent);
  }
}

/** Builds the pod config; nothing runs before start(). Nanosecond settings are converted by the caller. */
export function createPodConfig(options: PodConfigOptions): PodConfig {
  return new DefaultPodConfig(options);
}

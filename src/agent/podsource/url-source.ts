/**
 * The URL source (`--manifest-url`): fetches the URL at start and then every
 * `checkIntervalMs`, with the configured headers, and delivers its pods: a single Pod, a
 * PodList or a `kind: List` of pods, in YAML or JSON.
 *
 * | fetch gives                                      | delivered                       |
 * |--------------------------------------------------|---------------------------------|
 * | 200 with an empty (or blank) body                | no pods                         |
 * | 200 with the same body as the last delivered one | nothing (no change)             |
 * | 200 with pods                                    | the valid ones (each rejected pod logged) |
 * | another status, a network error, a timeout, a body that does not decode | nothing: the last pods stay (logged once per distinct failure) |
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { podFullName, type NodePod } from '../../api/pod/index.js';
import { decodeManifest } from './manifest.js';
import { prepareStaticPod } from './static.js';
import type { PodSource, SnapshotSink, SourceLogger } from './types.js';
import { quoteValue } from '../../api/quote.js';
import { DEFAULT_YAML_LIMITS, formatBytes } from '../../api/yaml-limits.js';

/** The largest body read, as upstream (10 MiB). */
export const MAX_MANIFEST_BYTES = DEFAULT_YAML_LIMITS.maxBytes;
export const DEFAULT_FETCH_TIMEOUT_MS = 10_000;

export interface UrlSourceOptions {
  readonly url: string;
  /** Header name to values; each value is sent in order (same-named headers added in order). */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly nodeName: string;
  /** Milliseconds between fetches; 0 or less: fetch only at start. */
  readonly checkIntervalMs: number;
  readonly onSnapshot: SnapshotSink;
  readonly logger: SourceLogger;
  /** The poll timer and the first-seen annotation. */
  readonly clock: Clock;
  /** Milliseconds one fetch may take (default 10 000, as upstream's client): a deadline on the socket, in real time. */
  readonly timeoutMs?: number;
}

class FetchFailure extends Error {}

export class UrlSource implements PodSource {
  private timer: Timer | undefined;
  private inflight: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private lastBody: string | undefined;
  private lastFailure: string | undefined;
  private loggedRejects = new Map<string, string>();
  private started = false;
  private stopped = false;

  constructor(private readonly options: UrlSourceOptions) {}

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.abort.abort();
    await this.inflight;
  }

  private poll(): Promise<void> {
    this.inflight = this.fetchOnce().finally(() => {
      this.inflight = undefined;
      if (!this.stopped && this.options.checkIntervalMs > 0) {
        this.timer = this.options.clock.setTimer(this.options.checkIntervalMs, () => {
          void this.poll();
        });
      }
    });
    return this.inflight;
  }

  private async fetchOnce(): Promise<void> {
    let body: string;
    try {
      body = await this.fetchBody();
    } catch (err) {
      if (this.stopped) return;
      this.fail(err instanceof FetchFailure ? err.message : `cannot fetch ${this.options.url}: ${describeError(err)}`);
      return;
    }
    if (this.stopped || body === this.lastBody) return;
    if (body.trim() === '') {
      this.succeed(body, []);
      return;
    }
    const decoded = decodeManifest(body, { origin: this.options.url, allowList: true });
    if (!decoded.ok) {
      this.fail(`cannot decode the manifest at ${this.options.url}`, decoded.problems);
      return;
    }
    this.succeed(body, this.prepare(decoded.pods));
  }

  private async fetchBody(): Promise<string> {
    const headers = new Headers();
    for (const [name, values] of Object.entries(this.options.headers)) {
      for (const value of values) headers.append(name, value);
    }
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS)]);
    const response = await fetch(this.options.url, { headers, signal });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new FetchFailure(`${this.options.url}: HTTP ${response.status} ${response.statusText}`.trimEnd());
    }
    return readLimited(response);
  }

  /** Static treatment of each pod; a rejected pod or a duplicate name is logged and left out. */
  private prepare(decoded: readonly Pod[]): NodePod[] {
    const pods: NodePod[] = [];
    const names = new Set<string>();
    const rejects = new Map<string, string>();
    decoded.forEach((pod, i) => {
      const prepared = prepareStaticPod(pod, { nodeName: this.options.nodeName, origin: { kind: 'http', url: this.options.url }, clock: this.options.clock });
      const key = `${i}:${pod.metadata?.name ?? ''}`;
      let problems: readonly string[] | undefined;
      if (!prepared.ok) problems = prepared.problems;
      else if (names.has(podFullName(prepared.pod))) problems = [`the pod name ${quoteValue(podFullName(prepared.pod))} (name_namespace) is used by an earlier pod of the list`];
      if (problems === undefined && prepared.ok) {
        names.add(podFullName(prepared.pod));
        pods.push(prepared.pod);
        return;
      }
      const lines = (problems ?? []).map((p) => `${this.options.url}: pod ${i} (${quoteValue(pod.metadata?.name ?? '')}): ${p}`);
      rejects.set(key, lines.join('\n'));
      if (this.loggedRejects.get(key) !== lines.join('\n')) {
        this.options.logger.warn(`rejected a pod of the manifest at ${this.options.url}`, { url: this.options.url, problems: lines });
      }
    });
    this.loggedRejects = rejects;
    return pods;
  }

  private succeed(body: string, pods: readonly NodePod[]): void {
    if (this.lastFailure !== undefined) this.options.logger.info(`the manifest at ${this.options.url} is readable again`);
    this.lastFailure = undefined;
    this.lastBody = body;
    try {
      this.options.onSnapshot(pods);
    } catch (err) {
      this.options.logger.error(`the pod config refused the URL source's snapshot: ${messageOf(err)}`);
    }
  }

  /** Logs a failed poll, unless it is the same failure as the last one. */
  private fail(message: string, problems: readonly string[] = []): void {
    const key = [message, ...problems].join('\n');
    if (key !== this.lastFailure) {
      this.options.logger.warn(`${message}; keeping the last pods read from it`, { url: this.options.url, ...(problems.length > 0 ? { problems } : {}) });
    }
    this.lastFailure = key;
  }
}

/** The message of a fetch error with its cause ("fetch failed: connect ECONNREFUSED 127.0.0.1:1"). */
function describeError(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  return cause === undefined ? messageOf(err) : `${messageOf(err)}: ${messageOf(cause)}`;
}

/** The body as UTF-8 text; a FetchFailure past MAX_MANIFEST_BYTES. */
async function readLimited(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
    if (done || value === undefined) break;
    size += value.byteLength;
    if (size > MAX_MANIFEST_BYTES) {
      await reader.cancel();
      throw new FetchFailure(`${response.url}: the body is larger than the limit of ${formatBytes(MAX_MANIFEST_BYTES)} for a manifest`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The observer of the agent-apiserver benchmark: one watch on the pods of a namespace in the API
 * server (GET /api/v1/namespaces/<ns>/pods?watch=true, opened from the resourceVersion of a list
 * before the runs), which records per pod name the moment (performance.now()) the bench read
 * its ADDED event, its first event with status.phase Running and its DELETED event. Callers
 * wait for those moments; nothing here polls the API server. If the server ends the stream
 * (its timeout is 30 to 60 minutes) the watch is opened again from the last resourceVersion
 * seen; an ERROR event (e.g. 410 Gone) fails every wait.
 */
import type { ApiClient, WatchEventLine, WatchStream } from '../test/helpers/apiserver.js';

export interface PodMoments {
  /** The ADDED event was read. */
  added?: number;
  /** The first event with status.phase Running was read. */
  running?: number;
  /** The DELETED event was read. */
  deleted?: number;
}

interface Listener {
  check(): void;
}

interface PodObject {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string };
  readonly status?: { readonly phase?: string };
}

export class PodWatch {
  private readonly moments = new Map<string, PodMoments>();
  private readonly listeners = new Set<Listener>();
  private stream: WatchStream;
  private ended = false;
  private closed = false;
  private failure: Error | undefined;
  private resourceVersion: string;
  private readonly pumping: Promise<void>;

  private constructor(private readonly client: ApiClient, private readonly namespace: string, stream: WatchStream, resourceVersion: string) {
    this.stream = stream;
    this.resourceVersion = resourceVersion;
    this.follow(stream);
    this.pumping = this.pump();
  }

  /** Lists the namespace's pods for a resourceVersion and watches from there. */
  static async open(client: ApiClient, namespace: string): Promise<PodWatch> {
    const list = await client.request('GET', `/api/v1/namespaces/${namespace}/pods`);
    if (list.status !== 200) throw new Error(`listing pods answered ${list.status}: ${list.text}`);
    const rv = (list.body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
    const stream = await client.watch(PodWatch.path(namespace, rv));
    if (stream.status !== 200) throw new Error(`the pod watch answered ${stream.status}`);
    return new PodWatch(client, namespace, stream, rv);
  }

  private static path(namespace: string, resourceVersion: string): string {
    return `/api/v1/namespaces/${namespace}/pods?watch=true${resourceVersion === '' ? '' : `&resourceVersion=${resourceVersion}`}`;
  }

  private follow(stream: WatchStream): void {
    void stream.ended.then(() => {
      if (this.stream === stream) this.ended = true;
    });
  }

  /** Reads events until closed; each is stamped as soon as it is handed over. */
  private async pump(): Promise<void> {
    while (!this.closed) {
      let event: WatchEventLine;
      try {
        event = await this.stream.next(1000);
      } catch {
        // No event within a second: normal when idle. If the server ended the stream, resume it.
        if (this.ended) await this.reopen();
        continue;
      }
      this.handle(event, performance.now());
    }
  }

  private async reopen(): Promise<void> {
    if (this.closed) return;
    process.stderr.write(`agent-apiserver: the pod watch ended; opening it again from resourceVersion ${this.resourceVersion}\n`);
    try {
      const stream = await this.client.watch(PodWatch.path(this.namespace, this.resourceVersion));
      this.stream = stream;
      this.ended = false;
      this.follow(stream);
    } catch (err) {
      this.fail(new Error(`cannot open the pod watch again: ${String(err)}`));
    }
  }

  private handle(event: WatchEventLine, at: number): void {
    if (event.type === 'ERROR') {
      this.fail(new Error(`the pod watch delivered an ERROR event: ${JSON.stringify(event.object)}`));
      return;
    }
    const pod = event.object as PodObject;
    if (pod.metadata?.resourceVersion !== undefined) this.resourceVersion = pod.metadata.resourceVersion;
    const name = pod.metadata?.name;
    if (event.type === 'BOOKMARK' || name === undefined) return;
    const m = this.moments.get(name) ?? {};
    this.moments.set(name, m);
    if (event.type === 'ADDED') m.added ??= at;
    if (event.type === 'DELETED') m.deleted ??= at;
    else if (pod.status?.phase === 'Running') m.running ??= at;
    for (const l of [...this.listeners]) l.check();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const l of [...this.listeners]) l.check();
  }

  /** What the watch saw of a pod so far. */
  of(name: string): PodMoments {
    return { ...this.moments.get(name) };
  }

  /** Resolves once `done` holds (checked now and after every event); rejects after timeoutMs or on a watch failure. */
  until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const listener: Listener = {
        check: () => {
          if (this.failure !== undefined) {
            finish();
            reject(this.failure);
          } else if (done()) {
            finish();
            resolve();
          }
        },
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (seen by the pod watch)`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      listener.check();
    });
  }

  /** Waits until the pod has been seen Running; returns its moments. */
  async running(name: string, timeoutMs: number): Promise<Required<Pick<PodMoments, 'running'>> & PodMoments> {
    await this.until(`pod ${name} Running`, () => this.moments.get(name)?.running !== undefined, timeoutMs);
    const m = this.of(name);
    return { ...m, running: m.running ?? 0 };
  }

  /** Waits until every named pod has been seen DELETED. */
  async deleted(names: readonly string[], timeoutMs: number): Promise<void> {
    await this.until(`${names.length} pods deleted`, () => names.every((n) => this.moments.get(n)?.deleted !== undefined), timeoutMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stream.close();
    await this.pumping;
  }
}

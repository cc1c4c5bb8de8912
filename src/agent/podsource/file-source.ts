/**
 * The file source (`--pod-manifest-path`): scans the path at start, again about 100 ms after
 * the file system reports a change, and every `checkIntervalMs` in any case (notifications
 * can be missed), and delivers each scan's full set of pods.
 *
 * Watching: the path's parent directory (for the path appearing, disappearing or being
 * replaced) and, when the path is a directory, the directory itself. After each scan the
 * watches are set up again if the path changed kind or a watched directory was replaced.
 *
 * | scan finds                         | delivered                          | logged                     |
 * |------------------------------------|------------------------------------|----------------------------|
 * | no such path                       | no pods                            | once, until it appears     |
 * | a directory                        | the valid pods of its files        | each rejected file, once per distinct problem list |
 * | a single valid file                | its pod                            |                            |
 * | a single rejected file             | nothing (the last pods stay, as upstream) | once per distinct problem list |
 * | an unreadable path (permissions)   | nothing (the last pods stay)       | once per distinct error    |
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { messageOf } from '../../api/errors.js';
import { createManifestCache, scanManifestPath, type RejectedManifest, type ScanResult } from './file-scan.js';
import type { PodSource, SnapshotSink, SourceLogger } from './types.js';

export const DEFAULT_DEBOUNCE_MS = 10;

export interface FileSourceOptions {
  /** A manifest file or a directory of manifests. */
  readonly path: string;
  readonly nodeName: string;
  /** Milliseconds between full re-lists; 0 or less: none (notifications only). */
  readonly checkIntervalMs: number;
  readonly onSnapshot: SnapshotSink;
  readonly logger: SourceLogger;
  readonly now?: () => Date;
  /** Milliseconds that change notifications are gathered for before a scan (default 100). */
  readonly debounceMs?: number;
}

type NameFilter = (name: string | null) => boolean;

interface Watch {
  readonly watcher: FSWatcher;
  /** Identity of the watched directory, to notice it being replaced. */
  readonly id: string;
}

export class FileSource implements PodSource {
  private readonly path: string;
  private readonly watches = new Map<string, Watch>();
  private readonly watchFailures = new Set<string>();
  /** The parsed manifests of this source, by file version (file-scan.ts). */
  private readonly manifests = createManifestCache();
  private logged = new Map<string, string>();
  private debounceTimer: NodeJS.Timeout | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopped = false;
  private missingLogged = false;
  private lastError: string | undefined;

  constructor(private readonly options: FileSourceOptions) {
    this.path = resolve(options.path);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.scanNow();
    if (this.stopped || this.options.checkIntervalMs <= 0) return;
    this.relistTimer = setInterval(() => {
      void this.scanNow();
    }, this.options.checkIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.debounceTimer);
    clearInterval(this.relistTimer);
    for (const w of this.watches.values()) w.watcher.close();
    this.watches.clear();
    await this.running;
  }

  /** Scans now, or once more right after the scan under way. Never rejects. */
  private scanNow(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      do {
        this.again = false;
        await this.scanOnce();
      } while (this.rescanWanted());
    };
    this.running = run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Whether a change arrived during the last scan (read through a method: the flag changes across awaits). */
  private rescanWanted(): boolean {
    return this.again && !this.stopped;
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private onChange(): void {
    if (this.stopped || this.debounceTimer !== undefined) return;
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      void this.scanNow();
    }, this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  private async scanOnce(): Promise<void> {
    const result = await scanManifestPath(this.path, { nodeName: this.options.nodeName, now: this.options.now ?? (() => new Date()), cache: this.manifests });
    if (this.isStopped()) return;
    await this.updateWatches(result.kind === 'dir');
    if (this.isStopped()) return;
    this.handle(result);
  }

  private handle(result: ScanResult): void {
    const { logger } = this.options;
    if (result.kind !== 'missing') this.missingLogged = false;
    if (result.kind !== 'error') this.lastError = undefined;
    switch (result.kind) {
      case 'missing':
        if (!this.missingLogged) logger.warn(`static pod path ${this.path} does not exist; no static pods from it until it appears`);
        this.missingLogged = true;
        this.report([]);
        this.deliver([]);
        return;
      case 'error':
        if (result.message !== this.lastError) logger.error(`cannot scan static pod path; keeping its last pods: ${result.message}`);
        this.lastError = result.message;
        return;
      case 'file':
        this.report(result.rejected);
        if (result.rejected.length === 0) this.deliver(result.pods);
        return;
      case 'dir':
        this.report(result.rejected);
        this.deliver(result.pods);
        return;
    }
  }

  private deliver(pods: readonly Pod[]): void {
    try {
      this.options.onSnapshot(pods);
    } catch (err) {
      this.options.logger.error(`the pod config refused the file source's snapshot: ${messageOf(err)}`);
    }
  }

  /** Logs each rejected manifest whose problems differ from those last logged for it. */
  private report(rejected: readonly RejectedManifest[]): void {
    const current = new Map<string, string>();
    for (const r of rejected) {
      const text = r.problems.join('\n');
      current.set(r.file, text);
      if (this.logged.get(r.file) !== text) {
        this.options.logger.warn(`rejected static pod manifest ${r.file}`, { file: r.file, problems: r.problems });
      }
    }
    this.logged = current;
  }

  private wantedWatches(pathIsDir: boolean): Map<string, NameFilter> {
    const wanted = new Map<string, NameFilter>();
    const name = basename(this.path);
    wanted.set(dirname(this.path), (n) => n === null || n === name);
    if (pathIsDir) wanted.set(this.path, (n) => n === null || !n.startsWith('.'));
    return wanted;
  }

  private async updateWatches(pathIsDir: boolean): Promise<void> {
    const wanted = this.wantedWatches(pathIsDir);
    const ids = new Map<string, string>();
    for (const dir of wanted.keys()) {
      try {
        const info = await stat(dir);
        if (info.isDirectory()) ids.set(dir, `${info.dev}:${info.ino}`);
      } catch (err) {
        // A directory that does not exist (yet) cannot be watched: the re-list covers it.
        this.noteWatchFailure(dir, err);
      }
    }
    if (this.stopped) return;
    for (const [dir, w] of this.watches) {
      if (ids.get(dir) === w.id) continue;
      w.watcher.close();
      this.watches.delete(dir);
    }
    for (const [dir, filter] of wanted) {
      const id = ids.get(dir);
      if (id === undefined || this.watches.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (filter(name)) this.onChange();
        });
        watcher.on('error', (err) => {
          this.options.logger.warn(`stopped watching ${dir}; the next scan watches again`, { error: messageOf(err) });
          watcher.close();
          if (this.watches.get(dir)?.watcher === watcher) this.watches.delete(dir);
          this.onChange();
        });
        this.watches.set(dir, { watcher, id });
        this.watchFailures.delete(dir);
      } catch (err) {
        this.noteWatchFailure(dir, err);
      }
    }
  }

  private noteWatchFailure(dir: string, err: unknown): void {
    if (this.watchFailures.has(dir)) return;
    this.watchFailures.add(dir);
    this.options.logger.info(`cannot watch ${dir}; changes there are seen at the next re-list`, { error: messageOf(err) });
  }
}

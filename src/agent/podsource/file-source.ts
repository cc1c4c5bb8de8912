/**
 * The file source (`--pod-manifest-path`): scans the whole path at start, every
 * `checkIntervalMs` (notifications can be missed), and on a notification that names no file
 * of the directory; a notification that names a file of the directory has that file alone
 * read again, at once (the files named in one event-loop turn together; manifest-dir.ts).
 * Each scan or file update delivers the full set of pods. They run one at a time, in the
 * order wanted: a full scan wanted during one runs once more after it, and files named during
 * a full scan are read again after it.
 *
 * Watching: the path's parent directory (the path appearing, disappearing or being replaced:
 * a full scan) and, when the path is a directory, the directory itself (a file named: that
 * file; no name: a full scan). A watcher's error, too, gives a full scan. After each full scan
 * the watches are set up again if the path changed kind or a watched directory was replaced.
 *
 * | found                              | delivered                          | logged                     |
 * |------------------------------------|------------------------------------|----------------------------|
 * | no such path                       | no pods                            | once, until it appears     |
 * | a directory                        | the valid pods of its files        | each rejected file, once per distinct problem list |
 * | a named file of the directory      | the same, that file read again     | the same                   |
 * | a named file rejected less than RACY_WINDOW_MS after its change | the same, that file's last outcome kept; read again after that window (its writer may not be done) | nothing yet |
 * | a single valid file                | its pod                            |                            |
 * | a single rejected file             | nothing (the last pods stay, as upstream) | once per distinct problem list |
 * | an unreadable path (permissions)   | nothing (the last pods stay)       | once per distinct error    |
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve, sep } from 'node:path';

import type { NodePod } from '../../api/pod/index.js';

import { realClock, type Clock, type Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { RACY_WINDOW_MS, createManifestCache, lookAtPath, resultOf, type ManifestOutcome, type RejectedManifest, type ScanContext, type ScanResult } from './file-scan.js';
import { ManifestDirectory } from './manifest-dir.js';
import type { PodSource, SnapshotSink, SourceLogger } from './types.js';

/** Starts watching `dir`, calling `onEvent` with the file name of each notification (null: none given). */
export type WatchDirectory = (dir: string, onEvent: (name: string | null) => void) => FSWatcher;

const watchDirectory: WatchDirectory = (dir, onEvent) =>
  watch(dir, { persistent: false }, (_event, name) => {
    onEvent(name);
  });

export interface FileSourceOptions {
  /** A manifest file or a directory of manifests. */
  readonly path: string;
  readonly nodeName: string;
  /** Milliseconds between full re-lists; 0 or less: none (notifications only). */
  readonly checkIntervalMs: number;
  readonly onSnapshot: SnapshotSink;
  readonly logger: SourceLogger;
  /** The re-list timer and the first-seen annotation. */
  readonly clock: Clock;
  /**
   * The host's clock, which the kernel stamps files from (default realClock): a file changed less
   * than RACY_WINDOW_MS before its read, by this clock's now(), is read again after that window,
   * waited for on this clock's timers. Tests give a FakeClock set against the files' times.
   */
  readonly hostClock?: Pick<Clock, 'now' | 'setTimer'>;
  /** How directories are watched (default fs.watch); tests pass one that drops notifications. */
  readonly watch?: WatchDirectory;
  /** Called after each full scan: whether it handled a snapshot (false: the same files as the last one). */
  readonly onFullScan?: (handled: boolean) => void;
}

/** The same files with the very same outcome objects. */
function sameOutcomes(a: ReadonlyMap<string, ManifestOutcome>, b: ReadonlyMap<string, ManifestOutcome>): boolean {
  if (a.size !== b.size) return false;
  for (const [file, outcome] of a) if (b.get(file) !== outcome) return false;
  return true;
}

type EventHandler = (name: string | null) => void;

/** Files read again before the first delivery of a file update (the chunks double after it). */
const FIRST_CHUNK = 8;

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
  private readonly context: ScanContext;
  /** The path's files as of the last full scan and the file updates since; undefined: the path was no directory then. */
  private directory: ManifestDirectory | undefined;
  private fullScanWanted = false;
  /** Files named by notifications since the last scan or file update began. */
  private readonly namesWanted = new Set<string>();
  /** Files rejected just after a change, to be read again when the hold timer fires. */
  private readonly namesHeld = new Set<string>();
  private logged = new Map<string, string>();
  private immediate: NodeJS.Immediate | undefined;
  private holdTimer: Timer | undefined;
  private relistTimer: Timer | undefined;
  private running: Promise<void> | undefined;
  private started = false;
  private stopped = false;
  private missingLogged = false;
  private lastError: string | undefined;
  /**
   * The file outcomes behind the last snapshot handled (file-scan.ts keeps one outcome object
   * per unchanged file version): a full scan that finds the very same ones has nothing new to
   * deliver. With 110 manifests, every fileCheckFrequency used to clone and compare all pods.
   */
  private handledFrom: { readonly kind: 'file' | 'dir'; readonly outcomes: ReadonlyMap<string, ManifestOutcome> } | undefined;

  constructor(private readonly options: FileSourceOptions) {
    this.path = resolve(options.path);
    const host = options.hostClock ?? realClock;
    this.context = { nodeName: options.nodeName, clock: options.clock, cache: this.manifests, fileClockMs: () => host.now() };
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.fullScanWanted = true;
    await this.run();
    if (this.stopped || this.options.checkIntervalMs <= 0) return;
    this.relistEvery(this.options.checkIntervalMs);
  }

  /** A full scan every `ms`, whether the last one is done or not (it then runs once more after it). */
  private relistEvery(ms: number): void {
    this.relistTimer = this.options.clock.setTimer(ms, () => {
      if (this.stopped) return;
      this.relistEvery(ms);
      this.fullScanWanted = true;
      void this.run();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearImmediate(this.immediate);
    this.holdTimer?.cancel();
    this.relistTimer?.cancel();
    for (const w of this.watches.values()) w.watcher.close();
    this.watches.clear();
    await this.running;
  }

  /** Does the work wanted, unless under way (it then picks up what is wanted since). Never rejects. */
  private run(): Promise<void> {
    this.running ??= this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** One full scan or file update at a time, until nothing is wanted. */
  private async work(): Promise<void> {
    while (!this.isStopped()) {
      const directory = this.directory;
      if (this.fullScanWanted || (this.namesWanted.size > 0 && directory === undefined)) {
        // A full scan covers the files named before it begins; those named while it runs come after it.
        this.fullScanWanted = false;
        this.namesWanted.clear();
        await this.fullScan();
      } else if (this.namesWanted.size > 0 && directory !== undefined) {
        const names = [...this.namesWanted];
        this.namesWanted.clear();
        await this.updateFiles(directory, names);
      } else {
        return;
      }
    }
  }

  /** Read through a method: the flag changes across awaits. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private wantFullScan(): void {
    this.fullScanWanted = true;
    this.soon();
  }

  private wantFile(name: string): void {
    this.namesWanted.add(name);
    this.soon();
  }

  /**
   * Runs at the end of this event-loop turn: the notifications read together from the file
   * system are all called back in one turn, so their files are read again together.
   */
  private soon(): void {
    if (this.stopped) return;
    this.immediate ??= setImmediate(() => {
      this.immediate = undefined;
      void this.run();
    });
  }

  private async fullScan(): Promise<void> {
    const look = await lookAtPath(this.path, this.context);
    if (this.isStopped()) return;
    await this.updateWatches(look.kind === 'dir');
    if (this.isStopped()) return;
    const outcomes = look.kind === 'dir' ? new Map(look.entries) : look.kind === 'file' ? new Map([[look.file, look.outcome]]) : undefined;
    this.directory = look.kind === 'dir' ? new ManifestDirectory(this.path, look.entries) : undefined;
    const before = this.handledFrom;
    if (outcomes !== undefined && before?.kind === look.kind && sameOutcomes(before.outcomes, outcomes)) {
      this.options.onFullScan?.(false);
      return;
    }
    this.handle(resultOf(look));
    this.handledFrom = outcomes === undefined ? undefined : { kind: look.kind === 'dir' ? 'dir' : 'file', outcomes };
    this.options.onFullScan?.(true);
  }

  /**
   * Reads the named files again and delivers, in chunks that double from FIRST_CHUNK: when many
   * files arrive at once (110 manifests copied in), the first pods go to their workers after a
   * few files' reading and parsing instead of all of them (about 2 ms of CPU each), and their
   * sandboxes are under way while the rest are parsed; each snapshot still holds every file's
   * outcome (the files not yet read again keep their last one). A full scan wanted meanwhile
   * ends the chunks (it reads every file).
   */
  private async updateFiles(directory: ManifestDirectory, names: readonly string[]): Promise<void> {
    let size = FIRST_CHUNK;
    for (let at = 0; at < names.length; at += size, size *= 2) {
      if (at > 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.isStopped() || this.fullScanWanted) return;
      }
      const held = await directory.update(names.slice(at, at + size), this.context);
      if (this.isStopped()) return;
      this.hold(held);
      this.handle({ kind: 'dir', ...directory.snapshot() });
      this.handledFrom = { kind: 'dir', outcomes: directory.outcomes() };
    }
  }

  private hold(names: readonly string[]): void {
    if (names.length === 0) return;
    for (const name of names) this.namesHeld.add(name);
    // Once the window has passed, a rejection is no longer taken for a write under way. The
    // window is measured against the files' change times, which the kernel takes from the
    // host's clock: the wait is on that clock too, whatever clock the source was given.
    this.holdTimer ??= (this.options.hostClock ?? realClock).setTimer(RACY_WINDOW_MS, () => {
      this.holdTimer = undefined;
      for (const name of this.namesHeld) this.namesWanted.add(name);
      this.namesHeld.clear();
      void this.run();
    });
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

  private deliver(pods: readonly NodePod[]): void {
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

  private wantedWatches(pathIsDir: boolean): Map<string, EventHandler> {
    const wanted = new Map<string, EventHandler>();
    const name = basename(this.path);
    wanted.set(dirname(this.path), (n) => {
      if (n === null || n === name) this.wantFullScan();
    });
    if (pathIsDir) {
      wanted.set(this.path, (n) => {
        if (n === null || n === '' || n.includes(sep)) this.wantFullScan(); // which file changed is not known
        else if (!n.startsWith('.')) this.wantFile(n);
      });
    }
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
    const watchDir = this.options.watch ?? watchDirectory;
    for (const [dir, onEvent] of wanted) {
      const id = ids.get(dir);
      if (id === undefined || this.watches.has(dir)) continue;
      try {
        const watcher = watchDir(dir, onEvent);
        watcher.on('error', (err) => {
          this.options.logger.warn(`stopped watching ${dir}; the next scan watches again`, { error: messageOf(err) });
          watcher.close();
          if (this.watches.get(dir)?.watcher === watcher) this.watches.delete(dir);
          this.wantFullScan();
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

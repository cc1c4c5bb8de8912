/**
 * The plugin watcher and its reconciler (upstream: pluginmanager with pluginwatcher,
 * reconciler and operationexecutor). The desired state is the sockets under the directory
 * (scan.ts), read every second and at once when a watched directory changes; the actual state is
 * the plugins registered. While every directory walked is watched and nothing is pending (no
 * back-off, no operation under way), the watchers start the passes and the periodic one runs
 * every 10 s only, as a safety net: upstream walks the directory once and then follows fsnotify,
 * and a walk every second was the largest periodic cost of an idle agent of ours. Each pass deregisters what went away or was made again, and registers
 * what is new, one operation at a time per socket:
 *
 *   GetInfo → handler of the plugin's type → ValidatePlugin → (registered) → RegisterPlugin
 *   → NotifyRegistrationStatus(true); a refusal on the way is notified with upstream's text.
 *
 * A registration that fails before the plugin counts as registered (no answer, no handler,
 * refused by validation) is tried again after 0.5 s, doubling to 2 min 2 s (upstream's
 * exponential back-off); one the handler refused stays refused until the socket is made again.
 */
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { dialRegistration, type RegistrationClient, type RegistrationDialer } from './client.js';
import { scanPluginDir, type ScannedSocket } from './scan.js';
import type { PluginHandler, PluginManager, RegisteredPlugin } from './types.js';

export const RECONCILE_PERIOD_MS = 1_000;
/** The periodic pass while the watchers announce every change (see the file comment). */
export const WATCHED_PERIOD_MS = 10_000;
export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 122_000;

export interface PluginManagerOptions {
  /** The plugin registry directory (`<root-dir>/plugins_registry`); made at start. */
  readonly dir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Default: gRPC over the socket. */
  readonly dial?: RegistrationDialer;
  /** Watch the directories for changes between passes (default true; tests drive the clock instead). */
  readonly watchDirs?: boolean;
}

interface Registered extends RegisteredPlugin {
  readonly identity: string;
  readonly handler: PluginHandler;
}

interface Backoff {
  readonly identity: string;
  readonly delayMs: number;
  readonly notBefore: number;
}

export function createPluginManager(options: PluginManagerOptions): PluginManager {
  const { clock } = options;
  const log = options.logger;
  const dial = options.dial ?? dialRegistration;
  const handlers = new Map<string, PluginHandler>();
  const actual = new Map<string, Registered>();
  const busy = new Map<string, Promise<void>>();
  const backoffs = new Map<string, Backoff>();
  const watchers = new Map<string, FSWatcher>();
  let timer: Timer | undefined;
  let pass: Promise<void> | undefined;
  let again = false;
  let running = false;
  /** The last scan failure logged (repeats are not logged). */
  let scanError = '';
  /** The directories of the last scan that succeeded; undefined after a failed scan. */
  let scannedDirs: readonly string[] | undefined;

  const failed = (socket: ScannedSocket, err: unknown): void => {
    const previous = backoffs.get(socket.path);
    const delayMs = previous?.identity === socket.identity ? Math.min(previous.delayMs * 2, BACKOFF_MAX_MS) : BACKOFF_INITIAL_MS;
    backoffs.set(socket.path, { identity: socket.identity, delayMs, notBefore: clock.now() + delayMs });
    log.error('Plugin registration failed; trying again', { path: socket.path, retryInMs: delayMs, err: messageOf(err) });
  };

  /** Tells the plugin why it is refused, then throws that reason (a failed notification adds to it). */
  async function refuse(client: RegistrationClient, message: string): Promise<never> {
    try {
      await client.notifyRegistrationStatus(false, message);
    } catch (err) {
      throw new Error(`${message}: ${messageOf(err)}`, { cause: err });
    }
    throw new Error(message);
  }

  /** upstream GenerateRegisterPluginFunc. */
  async function register(socket: ScannedSocket): Promise<void> {
    const path = socket.path;
    let client: RegistrationClient;
    try {
      client = await dial(path);
    } catch (err) {
      throw new Error(`RegisterPlugin error -- dial failed at socket ${path}, err: ${messageOf(err)}`, { cause: err });
    }
    try {
      let info;
      try {
        info = await client.getInfo();
      } catch (err) {
        throw new Error(`RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${path}, err: ${messageOf(err)}`, { cause: err });
      }
      const handler = handlers.get(info.type);
      if (handler === undefined) await refuse(client, `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${path}`);
      else {
        const endpoint = info.endpoint === '' ? path : info.endpoint;
        try {
          await handler.validatePlugin(info.name, endpoint, info.supportedVersions);
        } catch (err) {
          await refuse(client, `RegisterPlugin error -- plugin validation failed with err: ${messageOf(err)}`);
        }
        // Registered before the handler's registration, so that a socket removed meanwhile is deregistered.
        actual.set(path, { path, identity: socket.identity, type: info.type, name: info.name, endpoint, handler });
        try {
          await handler.registerPlugin(info.name, endpoint, info.supportedVersions);
        } catch (err) {
          const message = `RegisterPlugin error -- plugin registration failed with err: ${messageOf(err)}`;
          log.error('Plugin registration refused by its handler', { path, type: info.type, name: info.name, err: messageOf(err) });
          await client.notifyRegistrationStatus(false, message).catch((e: unknown) => {
            log.warn('Cannot tell the plugin its registration failed', { path, err: messageOf(e) });
          });
          return;
        }
        try {
          await client.notifyRegistrationStatus(true, '');
        } catch (err) {
          log.warn('Cannot tell the plugin it is registered', { path, err: messageOf(err) });
        }
        backoffs.delete(path);
        log.info('Plugin registered', { path, type: info.type, name: info.name, endpoint });
      }
    } finally {
      client.close();
    }
  }

  async function deregister(p: Registered): Promise<void> {
    actual.delete(p.path);
    log.info('Plugin deregistered: its socket went away', { path: p.path, type: p.type, name: p.name });
    try {
      await p.handler.deregisterPlugin(p.name, p.endpoint);
    } catch (err) {
      log.error('Plugin deregistration failed', { path: p.path, name: p.name, err: messageOf(err) });
    }
  }

  /** Runs `operation` for the socket unless one is under way. */
  function operate(path: string, operation: () => Promise<void>): void {
    if (busy.has(path)) return;
    const done = operation().finally(() => {
      busy.delete(path);
    });
    busy.set(path, done);
  }

  function watchDirs(dirs: readonly string[]): void {
    if (options.watchDirs === false) return;
    const wanted = new Set(dirs);
    for (const [dir, w] of watchers) {
      if (wanted.has(dir)) continue;
      w.close();
      watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, () => { soon(); });
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch (err) {
        log.v(4, 'Cannot watch a plugin directory; the periodic pass finds its sockets', { dir, err: messageOf(err) });
      }
    }
  }

  async function reconcile(): Promise<void> {
    let scan;
    try {
      scan = await scanPluginDir(options.dir);
      scanError = '';
    } catch (err) {
      if (scanError !== messageOf(err)) log.error('Cannot read the plugin registry directory', { dir: options.dir, err: messageOf(err) });
      scanError = messageOf(err);
      scannedDirs = undefined;
      return;
    }
    watchDirs(scan.dirs);
    scannedDirs = scan.dirs;
    for (const p of [...actual.values()]) {
      const now = scan.sockets.get(p.path);
      if (now?.identity !== p.identity) operate(p.path, () => deregister(p));
    }
    for (const [path, backoff] of backoffs) if (scan.sockets.get(path)?.identity !== backoff.identity) backoffs.delete(path);
    for (const socket of scan.sockets.values()) {
      if (actual.get(socket.path)?.identity === socket.identity) continue;
      if (actual.has(socket.path) || busy.has(socket.path)) continue;
      const backoff = backoffs.get(socket.path);
      if (backoff !== undefined && clock.now() < backoff.notBefore) continue;
      operate(socket.path, () => register(socket).catch((err: unknown) => { failed(socket, err); }));
    }
  }

  function runPass(): void {
    if (!running) return;
    if (pass !== undefined) {
      again = true;
      return;
    }
    timer?.cancel();
    timer = undefined;
    pass = reconcile().finally(() => {
      pass = undefined;
      if (!running) return;
      if (again) {
        again = false;
        runPass();
        return;
      }
      timer = clock.setTimer(nextPeriodMs(), runPass);
    });
  }

  /** 1 s while a pass may find work no watcher announces; otherwise the safety net's period. */
  function nextPeriodMs(): number {
    const watched = options.watchDirs !== false && scannedDirs !== undefined && scannedDirs.every((d) => watchers.has(d));
    return watched && backoffs.size === 0 && busy.size === 0 ? WATCHED_PERIOD_MS : RECONCILE_PERIOD_MS;
  }

  /** A watched directory changed: a pass now. */
  function soon(): void {
    runPass();
  }

  return {
    addHandler(type, handler) {
      handlers.set(type, handler);
      log.v(2, 'Plugin handler added', { type });
    },
    async start() {
      await mkdir(options.dir, { recursive: true, mode: 0o750 });
      running = true;
      runPass();
      log.info('Plugin watcher started', { dir: options.dir, types: [...handlers.keys()] });
    },
    async stop() {
      running = false;
      timer?.cancel();
      timer = undefined;
      for (const w of watchers.values()) w.close();
      watchers.clear();
      await pass;
      await Promise.all(busy.values());
    },
    registered: () => [...actual.values()].map(({ path, type, name, endpoint }) => ({ path, type, name, endpoint })),
    settled: async () => {
      await pass;
      await Promise.all(busy.values());
    },
  };
}

/**
 * systemd-logind over the system D-Bus, as the shutdown manager uses it (upstream: the
 * kubelet's systemd D-Bus helpers): the InhibitDelayMaxUSec property, a drop-in raising
 * InhibitDelayMaxSec with logind reloaded through systemd (KillUnit SIGHUP), a delay inhibitor
 * lock on shutdown (a file descriptor logind hands over: the connection negotiates Unix fd
 * passing), and the PrepareForShutdown signal. The bus is the one DBUS_SYSTEM_BUS_ADDRESS
 * names, else /run/dbus/system_bus_socket.
 */
import { EventEmitter } from 'node:events';
import { close as closeFd } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type dbus from 'dbus-next';
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';

export const NODE_SHUTDOWN_LOGIND_UNAVAILABLE = 'NODE_SHUTDOWN_LOGIND_UNAVAILABLE';
export const NODE_SHUTDOWN_LOGIND_CALL_FAILED = 'NODE_SHUTDOWN_LOGIND_CALL_FAILED';

export const DEFAULT_SYSTEM_BUS_ADDRESS = 'unix:path=/run/dbus/system_bus_socket';
export const DEFAULT_LOGIND_CONF_DIR = '/etc/systemd/logind.conf.d';
/** The drop-in the agent writes (upstream: 99-kubelet.conf). */
export const LOGIND_DROP_IN = '99-nodeagent.conf';

const LOGIN1 = 'org.freedesktop.login1';
const LOGIN1_PATH = '/org/freedesktop/login1';
const MANAGER = 'org.freedesktop.login1.Manager';
const SYSTEMD1 = 'org.freedesktop.systemd1';
const SYSTEMD1_PATH = '/org/freedesktop/systemd1';
/** How long a bus call may take (libdbus's default reply timeout). */
const CALL_TIMEOUT_MS = 25_000;

/** A held inhibitor lock. */
export interface InhibitLock {
  /** Closes the lock's file descriptor: logind lets the shutdown go on. Harmless twice. */
  release(): void;
}

export interface Logind {
  /** logind's InhibitDelayMaxUSec, in milliseconds. */
  inhibitDelayMaxMs(): Promise<number>;
  /** Raises InhibitDelayMaxSec to `seconds` with a drop-in and makes logind reload its configuration. */
  overrideInhibitDelay(seconds: number): Promise<void>;
  /** Takes a delay inhibitor lock on shutdown. */
  inhibitShutdown(): Promise<InhibitLock>;
  /** Calls `listener` with each PrepareForShutdown signal (true: shutting down; false: cancelled). */
  onPrepareForShutdown(listener: (active: boolean) => void): void;
  /** Calls `listener` once when the bus connection ends or fails. */
  onDisconnect(listener: (reason: string) => void): void;
  close(): void;
}

export interface ConnectLogindOptions {
  /** The system bus address (default: DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket). */
  readonly address?: string | undefined;
  /** Where the InhibitDelayMaxSec drop-in goes (default /etc/systemd/logind.conf.d). */
  readonly confDir?: string | undefined;
  /** Times the connection and each call out. */
  readonly clock: Clock;
}

function withTimeout<T>(clock: Clock, promise: Promise<T>, what: string, failed: Promise<never>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(CALL_TIMEOUT_MS, () => {
      reject(new OrchError(NODE_SHUTDOWN_LOGIND_CALL_FAILED, 'timeout', `${what}: no answer within ${CALL_TIMEOUT_MS / 1000}s`));
    });
    Promise.race([promise, failed]).then(
      (v) => { timer.cancel(); resolve(v); },
      (err: unknown) => { timer.cancel(); reject(err instanceof Error ? err : new Error(String(err))); },
    );
  });
}

/** A method of a proxy interface (introspected: absent when the service lacks it). */
function method(iface: dbus.ClientInterface, name: string): (...args: unknown[]) => Promise<unknown> {
  const m = iface[name];
  if (m === undefined) throw new Error(`the interface has no method ${name}`);
  return (...args) => (m as (...a: unknown[]) => Promise<unknown>).apply(iface, args);
}

/**
 * The D-Bus library, loaded by the first connectLogind: an agent without graceful node shutdown
 * (the default) never loads it nor the XML parser it brings (1.8 MiB of heap).
 */
let lib: typeof dbus | undefined;

function errorText(err: unknown): string {
  if (lib !== undefined && err instanceof lib.DBusError) return `${err.type}: ${err.text}`;
  return err instanceof Error ? err.message : String(err);
}

function callFailed(what: string, err: unknown): OrchError {
  const text = errorText(err);
  return new OrchError(NODE_SHUTDOWN_LOGIND_CALL_FAILED, 'unavailable', `${what} failed: ${text}`, { cause: err });
}

/**
 * Connects to the system bus and logind's Manager; throws NODE_SHUTDOWN_LOGIND_UNAVAILABLE
 * (naming the bus address) when the bus or logind cannot be reached.
 */
export async function connectLogind(options: ConnectLogindOptions): Promise<Logind> {
  const address = options.address ?? process.env.DBUS_SYSTEM_BUS_ADDRESS ?? DEFAULT_SYSTEM_BUS_ADDRESS;
  const confDir = options.confDir ?? DEFAULT_LOGIND_CONF_DIR;
  // sessionBus is the library's client for an explicit address; negotiateUnixFd reaches its stream.
  lib ??= (await import('dbus-next')).default;
  const bus = lib.sessionBus({ busAddress: address, negotiateUnixFd: true } as dbus.SessionBusOptions);
  const ended = new EventEmitter();
  let endReason: string | undefined;
  const end = (reason: string): void => {
    if (endReason !== undefined) return;
    endReason = reason;
    ended.emit('end', reason);
  };
  bus.on('error', (err: unknown) => { end(err instanceof Error ? err.message : String(err)); });
  // The library does not forward its connection's end; the stream's end is the bus going away.
  (bus as unknown as { _connection?: EventEmitter })._connection?.on('end', () => { end('the system bus closed the connection'); });
  const failed = new Promise<never>((_resolve, reject) => {
    ended.once('end', (reason: string) => { reject(new Error(`the system bus connection ended: ${reason}`)); });
  });
  failed.catch(() => undefined); // observed by each call's race
  const unavailable = (err: unknown): OrchError => new OrchError(NODE_SHUTDOWN_LOGIND_UNAVAILABLE, 'unavailable',
    `systemd-logind (${LOGIN1} on the system D-Bus at ${address}) cannot be reached: ${errorText(err)}`,
    { subject: address, cause: err });
  let manager: dbus.ClientInterface;
  let properties: dbus.ClientInterface;
  try {
    const object = await withTimeout(options.clock, bus.getProxyObject(LOGIN1, LOGIN1_PATH), `introspecting ${LOGIN1}`, failed);
    manager = object.getInterface(MANAGER);
    properties = object.getInterface('org.freedesktop.DBus.Properties');
  } catch (err) {
    bus.disconnect();
    throw unavailable(err);
  }
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await withTimeout(options.clock, run(), what, failed);
    } catch (err) {
      throw err instanceof OrchError ? err : callFailed(what, err);
    }
  };
  return {
    async inhibitDelayMaxMs() {
      const v = await call('reading InhibitDelayMaxUSec', () => method(properties, 'Get')(MANAGER, 'InhibitDelayMaxUSec') as Promise<dbus.Variant<bigint>>);
      return Number(v.value) / 1000;
    },
    async overrideInhibitDelay(seconds) {
      await mkdir(confDir, { recursive: true });
      await writeFile(path.join(confDir, LOGIND_DROP_IN), `# nodeagent's graceful node shutdown\n[Login]\nInhibitDelayMaxSec=${seconds}\n`, { mode: 0o644 });
      await call('reloading logind (systemd KillUnit systemd-logind.service SIGHUP)', async () => {
        const systemd = (await bus.getProxyObject(SYSTEMD1, SYSTEMD1_PATH)).getInterface('org.freedesktop.systemd1.Manager');
        await method(systemd, 'KillUnit')('systemd-logind.service', 'all', 1);
      });
    },
    async inhibitShutdown() {
      const fd = await call('taking a shutdown inhibitor lock (Manager.Inhibit)', () =>
        method(manager, 'Inhibit')('shutdown', 'nodeagent', 'nodeagent needs time to handle node shutdown', 'delay'));
      if (typeof fd !== 'number') throw callFailed('taking a shutdown inhibitor lock', new Error('logind answered without a file descriptor'));
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          closeFd(fd, () => undefined);
        },
      };
    },
    onPrepareForShutdown(listener) {
      manager.on('PrepareForShutdown', (active: unknown) => { listener(active === true); });
    },
    onDisconnect(listener) {
      if (endReason !== undefined) listener(endReason);
      else ended.once('end', listener);
    },
    close() {
      end('closed');
      bus.disconnect();
    },
  };
}

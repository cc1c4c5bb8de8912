/**
 * A private system bus and a test logind for graceful node shutdown tests: dbus-daemon (Debian's
 * dbus package) on a socket in a temporary directory with a session-like policy (everyone may
 * own and call anything), and, on it, a logind made with the same D-Bus library the agent uses:
 * org.freedesktop.login1's Manager with Inhibit (each lock a FIFO whose write end the caller
 * gets: the lock ends when the caller closes it, as logind's), ListInhibitors, the
 * InhibitDelayMaxUSec property (from logind.conf.d drop-ins in its own directory) and the
 * PrepareForShutdown signal, and org.freedesktop.systemd1's Manager.KillUnit, through which a
 * SIGHUP of systemd-logind.service makes it read its drop-ins again.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants, closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dbus from 'dbus-next';
import { requireBinaries } from './containerd.js';
import { waitFor } from './wait.js';

export interface SystemBus {
  /** `unix:path=...`: what DBUS_SYSTEM_BUS_ADDRESS is set to. */
  readonly address: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** Starts dbus-daemon on a private socket; fails clearly when dbus-daemon is missing. */
export async function startSystemBus(): Promise<SystemBus> {
  await requireBinaries('startSystemBus', ['dbus-daemon']);
  const dir = await mkdtemp(join(tmpdir(), 'na-dbus-'));
  const socket = join(dir, 'system_bus_socket');
  await writeFile(join(dir, 'bus.conf'), [
    '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">',
    '<busconfig>',
    '  <type>session</type>',
    `  <listen>unix:path=${socket}</listen>`,
    '  <auth>EXTERNAL</auth>',
    '  <policy context="default">',
    '    <allow send_destination="*" eavesdrop="true"/>',
    '    <allow eavesdrop="true"/>',
    '    <allow own="*"/>',
    '  </policy>',
    '</busconfig>',
    '',
  ].join('\n'));
  const child: ChildProcess = spawn('dbus-daemon', [`--config-file=${join(dir, 'bus.conf')}`, '--nofork', '--nopidfile'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve(); }); });
  let gone = false;
  void exited.then(() => { gone = true; });
  const stop = async (): Promise<void> => {
    if (!gone) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('dbus-daemon listening', async () => {
      if (gone) throw new Error(`dbus-daemon exited: ${stderr}`);
      return (await readdir(dir)).includes('system_bus_socket');
    }, { timeoutMs: 10_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { address: `unix:path=${socket}`, dir, stop };
}

export interface Inhibitor {
  readonly what: string;
  readonly who: string;
  readonly why: string;
  readonly mode: string;
  /** True once the caller closed its end. */
  released: boolean;
}

export interface TestLogind {
  /** Where KillUnit reads the InhibitDelayMaxSec drop-ins from (NODEAGENT_LOGIND_CONF_DIR). */
  readonly confDir: string;
  /** Every lock taken so far, in order. */
  inhibitors(): readonly Inhibitor[];
  /** The InhibitDelayMaxSec in force, seconds. */
  delaySeconds(): number;
  /** Emits PrepareForShutdown(active). */
  prepareForShutdown(active: boolean): void;
  stop(): Promise<void>;
}

/** Exports the test logind (and systemd's KillUnit) on `bus`; the delay starts at `delaySeconds`. */
export async function startTestLogind(bus: SystemBus, delaySeconds = 5): Promise<TestLogind> {
  const confDir = join(bus.dir, 'logind.conf.d');
  await mkdir(confDir, { recursive: true });
  const locks: { inhibitor: Inhibitor; reader: Socket }[] = [];
  let delay = delaySeconds;
  let fifos = 0;

  class Manager extends dbus.interface.Interface {
    Inhibit(what: string, who: string, why: string, mode: string): number {
      const fifo = join(bus.dir, `inhibit-${++fifos}.fifo`);
      // Made synchronously: the reply carries the write end, and the lock lives while it is open.
      execFileSync('mkfifo', [fifo]);
      const readFd = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      const writeFd = openSync(fifo, fsConstants.O_WRONLY);
      const inhibitor: Inhibitor = { what, who, why, mode, released: false };
      const reader = new Socket({ fd: readFd, readable: true, writable: false });
      reader.on('data', () => undefined);
      reader.on('end', () => { inhibitor.released = true; reader.destroy(); });
      reader.on('error', () => { inhibitor.released = true; });
      locks.push({ inhibitor, reader });
      // The reply is written when this returns; our copy of the write end is closed after it.
      setImmediate(() => { closeSync(writeFd); });
      return writeFd;
    }

    ListInhibitors(): [string, string, string, string, number, number][] {
      return locks.filter((l) => !l.inhibitor.released).map(({ inhibitor: i }) => [i.what, i.who, i.why, i.mode, 0, 0]);
    }

    get InhibitDelayMaxUSec(): bigint {
      return BigInt(delay) * 1_000_000n;
    }

    PrepareForShutdown(active: boolean): boolean {
      return active;
    }
  }
  Manager.configureMembers({
    methods: { Inhibit: { inSignature: 'ssss', outSignature: 'h' }, ListInhibitors: { inSignature: '', outSignature: 'a(ssssuu)' } },
    properties: { InhibitDelayMaxUSec: { signature: 't', access: 'read' } },
    signals: { PrepareForShutdown: { signature: 'b' } },
  });

  class Systemd extends dbus.interface.Interface {
    async KillUnit(unit: string, _who: string, signal: number): Promise<void> {
      if (unit !== 'systemd-logind.service' || signal !== 1) return;
      for (const file of (await readdir(confDir)).sort()) {
        const m = /^InhibitDelayMaxSec=(\d+)\s*$/m.exec(await readFile(join(confDir, file), 'utf8'));
        if (m?.[1] !== undefined) delay = Number(m[1]);
      }
    }
  }
  Systemd.configureMembers({ methods: { KillUnit: { inSignature: 'ssi', outSignature: '' } } });

  const connection = dbus.sessionBus({ busAddress: bus.address, negotiateUnixFd: true } as dbus.SessionBusOptions);
  connection.on('error', (err: unknown) => { process.stderr.write(`test logind: ${String(err)}\n`); });
  const manager = new Manager('org.freedesktop.login1.Manager');
  connection.export('/org/freedesktop/login1', manager);
  connection.export('/org/freedesktop/systemd1', new Systemd('org.freedesktop.systemd1.Manager'));
  await connection.requestName('org.freedesktop.login1', 0);
  await connection.requestName('org.freedesktop.systemd1', 0);
  return {
    confDir,
    inhibitors: () => locks.map((l) => l.inhibitor),
    delaySeconds: () => delay,
    prepareForShutdown(active) {
      manager.PrepareForShutdown(active);
    },
    stop() {
      for (const l of locks) l.reader.destroy();
      connection.disconnect();
      return Promise.resolve();
    },
  };
}

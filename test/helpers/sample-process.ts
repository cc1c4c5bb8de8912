/**
 * A sample program of examples/ (a device plugin, a CSI driver) as a child process: its settings
 * written to `<dir>/settings.json`, the events it prints on stdout as JSON lines collected, and
 * commands sent to its stdin as JSON lines. The helpers of each sample build on this.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WaitAbandoned, waitFor } from './wait.js';

export interface SampleEvent {
  readonly event: string;
}

export interface SampleProcess<E extends SampleEvent> {
  readonly child: ChildProcess;
  /** Every event printed so far, in order. */
  readonly events: E[];
  /** Resolves when the process has exited. */
  readonly exit: Promise<void>;
  exited(): boolean;
  /** Writes one command line to the process's stdin. */
  send(command: object): void;
  /** The first `event` printed at index `after` or later; fails at once, with its stderr, when the process exits first. */
  waitFor(event: string, after?: number, timeoutMs?: number): Promise<E>;
}

/** Starts `node <main> <dir>/settings.json`; `name` says what it is in failures ("CSI driver"). */
export async function startSampleProcess<E extends SampleEvent>(name: string, main: string, dir: string, settings: object): Promise<SampleProcess<E>> {
  const file = join(dir, 'settings.json');
  await writeFile(file, JSON.stringify(settings));
  const child = spawn(process.execPath, [main, file], { stdio: ['pipe', 'pipe', 'pipe'] });
  const events: E[] = [];
  let output = '';
  let errors = '';
  let exited = false;
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
    const lines = output.split('\n');
    output = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line) as E);
  });
  child.stderr.on('data', (d: Buffer) => { errors += d.toString(); });
  const exit = new Promise<void>((resolve) => { child.on('exit', () => { exited = true; resolve(); }); });
  return {
    child,
    events,
    exit,
    exited: () => exited,
    send: (command) => { child.stdin.write(`${JSON.stringify(command)}\n`); },
    waitFor: (event, after = 0, timeoutMs = 30_000) => waitFor(`${name} event ${event}`, () => {
      const found = events.slice(after).find((e) => e.event === event);
      if (found === undefined && exited) throw new WaitAbandoned(`the ${name} exited: ${errors}${JSON.stringify(events)}`);
      return found;
    }, { timeoutMs }),
  };
}

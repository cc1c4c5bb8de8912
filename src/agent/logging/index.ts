/**
 * The agent's logger, configured by `logging` (format text or json, verbosity, vmodule,
 * split streams) and changeable at run time (/debug/flags/v sets the verbosity).
 *
 * Owns: formatting and writing log lines. Must not: decide what to log, or buffer errors
 * (errors are always written at once; info lines are buffered only with the JSON split-stream
 * option and an info buffer size, flushed every flushFrequency).
 *
 * Text lines look like upstream's: `I1122 03:04:05.123456   4242 podworkers] message key="value"`.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { formatDuration } from '../../api/duration.js';

export type Severity = 'info' | 'warning' | 'error';

export interface Logger {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  /** True when `level` is enabled for this logger's module (cheap; guard expensive lines with it). */
  enabled(level: number): boolean;
  /** Info at verbosity `level`. */
  v(level: number, msg: string, fields?: Readonly<Record<string, unknown>>): void;
  /** A logger for a named module (vmodule patterns match the name). */
  named(module: string): Logger;
}

export interface LogSink {
  write(stream: 'out' | 'err', line: string): void;
}

export interface LoggingOptions {
  readonly format: 'text' | 'json';
  readonly verbosity: number;
  readonly vmodule: readonly { readonly filePattern: string; readonly verbosity: number }[];
  readonly splitStream: boolean;
  /** Bytes of info lines buffered with splitStream (0: none). */
  readonly infoBufferSize: number;
  /** Nanoseconds between flushes of buffered info lines. */
  readonly flushFrequency: number;
  readonly sink?: LogSink;
  /** The lines' timestamps and the flush timer. */
  readonly clock: Clock;
}

const processSink: LogSink = {
  write(stream, line) {
    (stream === 'err' ? process.stderr : process.stdout).write(line);
  },
};

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function textValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'bigint') return v.toString();
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return 'undefined';
  return JSON.stringify(v);
}

/** The shared state of every logger built from one configuration. */
export class LogRoot {
  private verbosity: number;
  private readonly vmodule: readonly { re: RegExp; level: number }[];
  private readonly sink: LogSink;
  private buffered: string[] = [];
  private bufferedBytes = 0;
  private timer: Timer | undefined;
  private closed = false;

  constructor(private readonly options: LoggingOptions) {
    this.verbosity = options.verbosity;
    this.vmodule = options.vmodule.map((m) => ({ re: globToRegExp(m.filePattern), level: m.verbosity }));
    this.sink = options.sink ?? processSink;
    if (options.splitStream && options.infoBufferSize > 0) this.flushEvery(Math.max(1, options.flushFrequency / 1e6));
  }

  private flushEvery(ms: number): void {
    this.timer = this.options.clock.setTimer(ms, () => {
      if (this.closed) return;
      this.flushEvery(ms);
      this.flush();
    });
  }

  /** Changes the global verbosity (the /debug/flags/v handler). */
  setVerbosity(level: number): void {
    this.verbosity = level;
  }

  getVerbosity(): number {
    return this.verbosity;
  }

  levelFor(module: string): number {
    for (const m of this.vmodule) if (m.re.test(module)) return m.level;
    return this.verbosity;
  }

  /** Writes buffered info lines. Idempotent. */
  flush(): void {
    if (this.buffered.length === 0) return;
    const lines = this.buffered.join('');
    this.buffered = [];
    this.bufferedBytes = 0;
    this.sink.write('out', lines);
  }

  /** Flushes and stops the flush timer. */
  close(): void {
    this.closed = true;
    this.flush();
    this.timer?.cancel();
  }

  emit(module: string, severity: Severity, level: number, msg: string, fields: Readonly<Record<string, unknown>> | undefined): void {
    const now = new Date(this.options.clock.now());
    const line = this.options.format === 'json' ? this.json(now, module, severity, level, msg, fields) : this.text(now, module, severity, msg, fields);
    const toErr = this.options.splitStream ? severity === 'error' : true;
    if (!toErr && this.options.infoBufferSize > 0) {
      this.buffered.push(line);
      this.bufferedBytes += line.length;
      if (this.bufferedBytes >= this.options.infoBufferSize) this.flush();
      return;
    }
    this.sink.write(toErr ? 'err' : 'out', line);
  }

  private text(now: Date, module: string, severity: Severity, msg: string, fields: Readonly<Record<string, unknown>> | undefined): string {
    const s = severity === 'info' ? 'I' : severity === 'warning' ? 'W' : 'E';
    const micros = pad(now.getUTCMilliseconds() * 1000, 6);
    const stamp = `${pad(now.getUTCMonth() + 1, 2)}${pad(now.getUTCDate(), 2)} ${pad(now.getUTCHours(), 2)}:${pad(now.getUTCMinutes(), 2)}:${pad(now.getUTCSeconds(), 2)}.${micros}`;
    // A field without a value is left out, as in the JSON format (never `container=undefined`).
    const kv = fields === undefined ? '' : Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => ` ${k}=${textValue(v)}`).join('');
    return `${s}${stamp} ${String(process.pid).padStart(7)} ${module}] ${msg}${kv}\n`;
  }

  private json(now: Date, module: string, severity: Severity, level: number, msg: string, fields: Readonly<Record<string, unknown>> | undefined): string {
    const record: Record<string, unknown> = { ts: now.getTime() / 1000, caller: module, msg };
    if (severity === 'info') record.v = level;
    else record.severity = severity;
    for (const [k, v] of Object.entries(fields ?? {})) record[k] = v instanceof Error ? v.message : v;
    return `${JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}\n`;
  }

  logger(module: string): Logger {
    const emit = (severity: Severity, level: number, msg: string, fields?: Readonly<Record<string, unknown>>): void => {
      this.emit(module, severity, level, msg, fields);
    };
    return {
      info: (msg, fields) => {
        emit('info', 0, msg, fields);
      },
      warn: (msg, fields) => {
        emit('warning', 0, msg, fields);
      },
      error: (msg, fields) => {
        emit('error', 0, msg, fields);
      },
      enabled: (level) => level <= this.levelFor(module),
      v: (level, msg, fields) => {
        if (level <= this.levelFor(module)) emit('info', level, msg, fields);
      },
      named: (sub) => this.logger(`${module}/${sub}`),
    };
  }

  describe(): string {
    return `format=${this.options.format} v=${this.verbosity} flush=${formatDuration(this.options.flushFrequency)}`;
  }
}

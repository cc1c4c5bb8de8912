/**
 * FakeLogger: a Logger that keeps every line (at every verbosity, from every named logger made
 * from it) for the tests' assertions, and writes nothing. Test code only: import it from
 * testing.ts.
 */
import type { Logger } from './index.js';

export interface LogLine {
  /** info, warn, error, or the verbosity of a `v` line. */
  readonly level: 'info' | 'warn' | 'error' | number;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export class FakeLogger implements Logger {
  /** Every line, in order. */
  readonly lines: LogLine[] = [];

  info(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'info', msg, fields });
  }

  warn(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'warn', msg, fields });
  }

  error(msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level: 'error', msg, fields });
  }

  /** Every verbosity is enabled: `v` lines are kept too. */
  enabled(): boolean {
    return true;
  }

  v(level: number, msg: string, fields: Readonly<Record<string, unknown>> = {}): void {
    this.lines.push({ level, msg, fields });
  }

  /** The same logger: lines of every module land in `lines`. */
  named(): Logger {
    return this;
  }

  /** The lines of one level (or verbosity). */
  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }

  /** True when a line's message contains `text`. */
  has(text: string): boolean {
    return this.lines.some((l) => l.msg.includes(text));
  }

  /** Each line as text: level, message and fields as JSON. */
  texts(): string[] {
    return this.lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.fields)}`);
  }

  /** The lines (as `texts` has them) that contain every one of `parts`. */
  matching(...parts: string[]): string[] {
    return this.texts().filter((t) => parts.every((p) => t.includes(p)));
  }
}

/**
 * The rows the benches print, in the shape of the figures table (bench/README.md): what is measured,
 * the baseline measured in the same run, ours, the target.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Row {
  readonly measure: string;
  readonly baseline: string;
  readonly ours: string;
  readonly target: string;
}

export function formatTable(rows: readonly Row[]): string[] {
  return [
    '| measure | baseline (same run) | ours | target |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.baseline} | ${r.ours} | ${r.target} |`),
  ];
}

/** Nearest-rank percentile of samples, rounded to 0.1. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round((sorted[index] ?? NaN) * 10) / 10;
}

export const ms = (v: number): string => `${Math.round(v)}`;
export const seconds = (v: number): string => `${(v / 1000).toFixed(1)} s`;

/** Makes SIGINT and SIGTERM end the process through process.exit, so that the exit hooks stop the agents and containerd. */
export function exitOnSignals(): void {
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/** Whether this module is the program node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(path.resolve(process.argv[1])).href === moduleUrl;
}

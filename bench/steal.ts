/**
 * The machine's steal time (/proc/stat): the share of its CPUs' time that the hypervisor gave to
 * other guests. On a shared VM it drifts by tens of percent within minutes and moves every timing
 * and CPU figure with it, so the benches print it for each window they measure.
 */
import { readFile } from 'node:fs/promises';

/** The summed CPU times of /proc/stat's `cpu` line, in clock ticks. */
export interface CpuTimes {
  readonly steal: number;
  readonly total: number;
}

/** Parses the first (`cpu`, all CPUs) line of /proc/stat. */
export function parseCpuTimes(procStat: string): CpuTimes {
  const line = procStat.split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'cpu') throw new Error(`/proc/stat: the first line is not the cpu line: ${line}`);
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice.
  const values = fields.slice(1, 9).map(Number);
  if (values.length < 8 || values.some((v) => !Number.isFinite(v))) throw new Error(`/proc/stat: cannot read the cpu line: ${line}`);
  return { steal: values[7] ?? 0, total: values.reduce((a, b) => a + b, 0) };
}

/** Steal time between two samples, % of all CPUs' time (0 when no time passed). */
export function stealPercent(a: CpuTimes, b: CpuTimes): number {
  const total = b.total - a.total;
  return total <= 0 ? 0 : (100 * (b.steal - a.steal)) / total;
}

/** Runs `fn` and returns its result with the machine's steal time over it, %. */
export async function withSteal<T>(fn: () => Promise<T>): Promise<{ readonly result: T; readonly steal: number }> {
  const read = async (): Promise<CpuTimes> => parseCpuTimes(await readFile('/proc/stat', 'utf8'));
  const before = await read();
  const result = await fn();
  return { result, steal: stealPercent(before, await read()) };
}

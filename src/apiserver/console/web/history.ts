/**
 * Series of samples over the last minutes (node and pod CPU and memory from the resource
 * metrics API, which keeps no history itself): each series keeps the samples of its window, one
 * per timestamp, oldest first.
 */

export interface Sample {
  readonly t: number;
  readonly v: number;
}

export class History {
  private readonly series = new Map<string, Sample[]>();
  private readonly windowMs: number;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  /** Adds a sample (ignored when its time is not after the series' last one) and drops those out of the window. */
  add(key: string, t: number, v: number): void {
    let samples = this.series.get(key);
    if (samples === undefined) {
      samples = [];
      this.series.set(key, samples);
    }
    const last = samples[samples.length - 1];
    if (last !== undefined && t <= last.t) return;
    samples.push({ t, v });
    const from = t - this.windowMs;
    let drop = 0;
    while (drop < samples.length && (samples[drop]?.t ?? 0) < from) drop++;
    if (drop > 0) samples.splice(0, drop);
  }

  get(key: string): readonly Sample[] {
    return this.series.get(key) ?? [];
  }

  /** Forgets the series whose key is not in `keep` (objects that are gone). */
  retain(keep: (key: string) => boolean): void {
    for (const key of [...this.series.keys()]) if (!keep(key)) this.series.delete(key);
  }
}

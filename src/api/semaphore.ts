/**
 * A counting semaphore: at most `limit` tasks at once, the others wait in arrival order (so the
 * first to ask are the first done, where an unbounded start would interleave everyone's steps).
 * The runtime manager bounds its RunPodSandbox calls with one, the pod cgroup manager the
 * cgroups it makes at once.
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;

  /** `limit` 0 (or less): no bound. A fraction is rounded down, but at least 1. */
  constructor(limit: number) {
    this.limit = limit <= 0 ? 0 : Math.max(1, Math.floor(limit));
  }

  /** Runs `task` once a slot is free; the slot passes on when it settles (also when it throws). */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** Tasks running and waiting. */
  load(): { readonly running: number; readonly waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /**
   * Waits for a slot and resolves to the function that gives it back: for a slot held across
   * several steps. Giving it back twice gives it back once.
   */
  async hold(): Promise<() => void> {
    await this.acquire();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release();
    };
  }

  private acquire(): Promise<void> {
    if (this.limit === 0 || this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.running--;
    else next(); // the slot passes straight to the next task: `running` stays
  }
}

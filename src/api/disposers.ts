/**
 * A stack of teardown steps: a composition root pushes each step right after the thing it
 * undoes was made or started, and disposes them all in reverse order, so that nothing is stopped
 * before what depends on it. Every step runs even when an earlier one failed.
 */
export class Disposers {
  private readonly steps: (() => unknown)[] = [];

  /** Adds a step (sync or async) to run at dispose time, before every step pushed earlier. */
  push(step: () => unknown): void {
    this.steps.push(step);
  }

  /**
   * Runs every step, newest first, each after the previous one settled; the stack is empty
   * afterwards. Rejects with an AggregateError of the failures once all steps ran.
   */
  async dispose(): Promise<void> {
    const errors: unknown[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} teardown step(s) failed`);
  }
}

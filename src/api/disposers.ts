/**
 * A stack of teardown steps: a composition root pushes each step right after the thing it
 * undoes was made or started, and disposes them all in reverse order, so that nothing is stopped
 * before what depends on it. Every step runs even when an earlier one failed. With a deadline, a
 * step that has not settled in time is reported by its name and left behind, so that one hung
 * step (a socket that never closes) cannot stop the rest of the teardown.
 */
import type { Clock } from './clock.js';

export interface DisposeDeadline {
  readonly clock: Pick<Clock, 'setTimer'>;
  /** How long one step may take. */
  readonly stepMs: number;
  /** Told the name of a step that did not settle within `stepMs`; the next step runs then. */
  onOverdue(name: string): void;
}

interface Step {
  readonly run: () => unknown;
  readonly name: string;
}

export class Disposers {
  private readonly steps: Step[] = [];

  /** Adds a step (sync or async) to run at dispose time, before every step pushed earlier. */
  push(run: () => unknown, name = `teardown step ${this.steps.length + 1}`): void {
    this.steps.push({ run, name });
  }

  /**
   * Runs every step, newest first, each after the previous one settled (or, with `deadline`,
   * overdue); the stack is empty afterwards. Rejects with an AggregateError of the failures
   * once all steps ran.
   */
  async dispose(deadline?: DisposeDeadline): Promise<void> {
    const errors: unknown[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        const settled = Promise.resolve().then(step.run);
        await (deadline === undefined ? settled : withinDeadline(settled, step.name, deadline));
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} teardown step(s) failed`);
  }
}

function withinDeadline(settled: Promise<unknown>, name: string, deadline: DisposeDeadline): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = deadline.clock.setTimer(deadline.stepMs, () => {
      deadline.onOverdue(name);
      resolve(undefined);
    }, { keepAlive: true });
    settled.then(
      (v) => { timer.cancel(); resolve(v); },
      (err: unknown) => { timer.cancel(); reject(err instanceof Error ? err : new Error(String(err))); },
    );
  });
}

/**
 * A fake plugin runner for the credential providers' tests: answers each run with what the
 * test scripted (a response object, raw stdout, or an error), and records the runs.
 */
import type { PluginExec, PluginRun } from './plugin.js';

export type FakeAnswer = Record<string, unknown> | { readonly raw: string } | Error;

export class FakePluginExec implements PluginExec {
  readonly runs: PluginRun[] = [];
  private readonly answers: ((run: PluginRun) => FakeAnswer)[] = [];

  /** Every later run answers with `answer` (or what it computes from the run), until replaced. */
  answer(answer: FakeAnswer | ((run: PluginRun) => FakeAnswer)): void {
    this.answers.length = 0;
    this.answers.push(typeof answer === 'function' ? answer : () => answer);
  }

  run(run: PluginRun): Promise<string> {
    this.runs.push(run);
    const make = this.answers[0];
    if (make === undefined) return Promise.reject(new Error('FakePluginExec: no answer scripted'));
    const a = make(run);
    if (a instanceof Error) return Promise.reject(a);
    if ('raw' in a && typeof a.raw === 'string') return Promise.resolve(a.raw);
    return Promise.resolve(JSON.stringify(a));
  }
}

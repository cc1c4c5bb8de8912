/**
 * The fuzz suites' harness over fast-check: a fixed seed (FUZZ_SEED, default 29) and a bounded
 * number of cases (each suite's own, or FUZZ_RUNS), so that a failure reproduces: the line a run
 * prints names its seed, and a failure's message carries fast-check's counterexample and path.
 * Every run prints one figures line, `fuzz <suite>: <cases> cases, <failures> failures, <ms> ms,
 * seed <seed>`, which docs/reliability.md's tables are made from. Test code only.
 */
import fc from 'fast-check';

import { truncateText } from './quote.js';

export { fc };

export interface FuzzFigures {
  readonly suite: string;
  readonly cases: number;
  readonly failures: number;
  readonly ms: number;
  readonly seed: number;
}

/** The seed of every suite: FUZZ_SEED, or the fixed default. */
export function fuzzSeed(): number {
  const given = Number(process.env.FUZZ_SEED);
  return Number.isSafeInteger(given) ? given : 29;
}

/** The number of cases of a suite: FUZZ_RUNS, or the suite's own (kept to a few seconds). */
export function fuzzRuns(own: number): number {
  const given = Number(process.env.FUZZ_RUNS);
  return Number.isSafeInteger(given) && given > 0 ? given : own;
}

/** Writes the figures line (docs/reliability.md's tables are made from these lines). */
export function reportFigures(f: FuzzFigures): void {
  process.stdout.write(`fuzz ${f.suite}: ${f.cases} cases, ${f.failures} failures, ${f.ms} ms, seed ${f.seed}\n`);
}

function outcome<T>(suite: string, details: fc.RunDetails<T>, started: number): FuzzFigures {
  const figures = { suite, cases: details.numRuns, failures: details.failed ? 1 : 0, ms: Math.round(performance.now() - started), seed: details.seed };
  reportFigures(figures);
  if (details.failed) {
    const why = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    const example = truncateText(fc.stringify(details.counterexample), 2000);
    throw new Error(`fuzz ${suite} failed (FUZZ_SEED=${details.seed} reproduces it): ${truncateText(why, 2000)}\ncounterexample: ${example}\n${fc.defaultReportMessage(details) ?? ''}`);
  }
  return figures;
}

/** Checks a synchronous property over `runs` cases; throws with the counterexample on failure. */
export function fuzz<T>(suite: string, arbitrary: fc.Arbitrary<T>, property: (value: T) => void, runs: number): FuzzFigures {
  const started = performance.now();
  const details = fc.check(fc.property(arbitrary, property), { seed: fuzzSeed(), numRuns: fuzzRuns(runs) });
  return outcome(suite, details, started);
}

/** Checks an asynchronous property (requests to a server in process). */
export async function fuzzAsync<T>(suite: string, arbitrary: fc.Arbitrary<T>, property: (value: T) => Promise<void>, runs: number): Promise<FuzzFigures> {
  const started = performance.now();
  const details = await fc.check(fc.asyncProperty(arbitrary, property), { seed: fuzzSeed(), numRuns: fuzzRuns(runs) });
  return outcome(suite, details, started);
}

/** A string that is, most of the time, close to `samples`: one of them, mutated by a few edits. */
export function mutatedText(samples: readonly string[]): fc.Arbitrary<string> {
  const edit = fc.record({ at: fc.nat(), cut: fc.nat({ max: 8 }), insert: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{', '[', '"', ':', '- ', '\n', '  ', '&a ', '*a', '!!binary ', '\t', '\u0000', '---\n')) });
  return fc.tuple(fc.constantFrom(...samples), fc.array(edit, { maxLength: 6 })).map(([text, edits]) => {
    let out = text;
    for (const e of edits) {
      const at = out.length === 0 ? 0 : e.at % out.length;
      out = `${out.slice(0, at)}${e.insert}${out.slice(at + e.cut)}`;
    }
    return out;
  });
}

/** Where a JSON value is changed: replace the value at a random path with `replacement`. */
export function mutatedObject(base: unknown, replacement: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]): void => {
    paths.push(path);
    if (Array.isArray(v)) v.forEach((x, i) => { walk(x, [...path, i]); });
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(base, []);
  return fc.array(fc.tuple(fc.constantFrom(...paths), replacement, fc.boolean()), { minLength: 1, maxLength: 3 }).map((changes) => {
    const copy = structuredClone(base) as Record<string | number, unknown>;
    let result: unknown = copy;
    for (const [path, value, remove] of changes) {
      if (path.length === 0) {
        result = value;
        continue;
      }
      let parent: unknown = result;
      for (const key of path.slice(0, -1)) parent = typeof parent === 'object' && parent !== null ? (parent as Record<string | number, unknown>)[key] : undefined;
      if (typeof parent !== 'object' || parent === null) continue;
      const last = path[path.length - 1] ?? '';
      if (remove && !Array.isArray(parent)) Reflect.deleteProperty(parent, last);
      else (parent as Record<string | number, unknown>)[last] = value;
    }
    return result;
  });
}

/** One generated HTTP request: the target exactly as sent, the method, headers and a body. */
export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface RequestVocabulary {
  /** Path segments the server knows (the rest is made of odd ones). */
  readonly segments: readonly string[];
  /** Query parameter names the server reads. */
  readonly parameters: readonly string[];
  /** Values worth trying for them. */
  readonly values: readonly string[];
  /** Header sets worth trying (authorization, content types...). */
  readonly headers: readonly Record<string, string>[];
  readonly bodies: readonly string[];
}

const ODD_SEGMENTS = ['', '.', '..', '%2e%2e', '%', '%zz', '%00', ':', '@', '/', '~', 'x'.repeat(300), '\u00e9', '%C3%A9', '*', ';a=b', '?', '#'];
const ODD_VALUES = ['', '-1', '0', '1', 'true', 'false', 'x', '%', '%zz', '1e99', '9'.repeat(30), 'a,b', '=', '&', 'x'.repeat(300), '\u00e9'];

/** Requests made of a server's own words and odd ones: paths, methods, query strings, headers, bodies. */
export function requestArbitrary(v: RequestVocabulary): fc.Arbitrary<FuzzRequest> {
  // What an HTTP client refuses to send (spaces, controls, non-ASCII) is escaped; '%' is left as it is.
  const encode = (s: string): string => s.replace(/[^\u0021-\u007e]|[#?]/gu, (c) => encodeURIComponent(c));
  const segment = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...v.segments) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_SEGMENTS) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map(encode) });
  const leading = fc.constantFrom('/', '/', '/', '//', '///', '//:', '//@', '//:99999/');
  const pathArb = fc.tuple(leading, fc.array(segment, { maxLength: 7 }), fc.boolean()).map(([lead, parts, slash]) => `${lead}${parts.map(encode).join('/')}${slash ? '/' : ''}`);
  const value = fc.oneof(fc.constantFrom(...v.values), fc.constantFrom(...ODD_VALUES), fc.string({ maxLength: 8 })).map((x) => encode(x).replace(/&/g, '%26'));
  const param = fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...v.parameters) }, { weight: 1, arbitrary: fc.string({ maxLength: 5 }).map(encodeURIComponent) }), value, fc.boolean())
    .map(([k, val, bare]) => (bare ? k : `${k}=${val}`));
  const query = fc.option(fc.array(param, { maxLength: 4 }).map((ps) => `?${ps.join('&')}`), { nil: '' });
  const method = fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'FOO');
  const headers = fc.constantFrom(...v.headers);
  const body = fc.oneof(fc.constantFrom(...v.bodies), fc.string({ maxLength: 30 }));
  return fc.record({ method, path: fc.tuple(pathArb, query).map(([p, q]) => `${p}${q}`), headers, body });
}

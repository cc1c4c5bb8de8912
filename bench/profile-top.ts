/**
 * Reads V8 CPU profiles (node --cpu-prof: `*.cpuprofile` files, or a directory of them) and
 * prints where the process's time went: its shares of idle, GC, V8/native (program) and of
 * our own code (the files under dist/src/), then the functions of our own code with the most
 * self time (the time in the function itself, not in what it calls).
 *
 * With --callers NAME (repeatable), also where the time in the functions whose name contains NAME
 * (callees included) comes from: the chains of our own frames nearest them (--depth, default 3).
 * With --last SECONDS, only the samples of the profile's last SECONDS count (e.g. an idle window
 * that ends when the agent stops). With --busiest S, only the S seconds of each profile with the
 * most busy time (e.g. a burst of pod starts within a whole bench run); --timeline S prints the
 * busy time of every S seconds.
 *
 *   node dist/bench/profile-top.js [--top 25] [--callers NAME]... [--depth 3] [--last SECONDS] [--busiest S] [--timeline S] FILE-OR-DIRECTORY...
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isMain } from './table.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

export interface SelfTime {
  /** `function (file:line)`; file relative to dist/src/ for our code. */
  readonly name: string;
  readonly ms: number;
  readonly ours: boolean;
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Self time of each category: (idle), (garbage collector), (program), ours, other (node, libraries). */
  readonly categories: Readonly<Record<'idle' | 'gc' | 'program' | 'ours' | 'other', number>>;
  /** Every function with self time, most first. */
  readonly functions: readonly SelfTime[];
}

const OURS = '/dist/src/';

/** Self time per function (one line per function: samples of its nodes added up), from the samples' time deltas. */
export function summarize(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's time is the delta to the next sample (V8's own attribution).
  samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, deltas[i + 1] ?? 0)));
  const categories = { idle: 0, gc: 0, program: 0, ours: 0, other: 0 };
  const functions = new Map<string, SelfTime>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    const ms = us / 1000;
    total += ms;
    const ours = frame.url.includes(OURS);
    if (frame.functionName === '(idle)') categories.idle += ms;
    else if (frame.functionName === '(garbage collector)') categories.gc += ms;
    else if (frame.functionName === '(program)') categories.program += ms;
    else if (ours) categories.ours += ms;
    else categories.other += ms;
    const name = frameName(frame);
    const known = functions.get(name);
    functions.set(name, { name, ours, ms: (known?.ms ?? 0) + ms });
  }
  return { totalMs: total, categories, functions: [...functions.values()].sort((a, b) => b.ms - a.ms) };
}

function frameName(frame: ProfileNode['callFrame']): string {
  const ours = frame.url.includes(OURS);
  const file = ours ? frame.url.slice(frame.url.indexOf(OURS) + OURS.length) : frame.url.replace(/^file:\/\//, '');
  return `${frame.functionName === '' ? '(anonymous)' : frame.functionName} (${file === '' ? 'native' : `${file}:${frame.lineNumber + 1}`})`;
}

/** The profile's samples of its last `seconds` only (the time of a sample: the sum of the time deltas up to it). */
export function lastSeconds(profile: CpuProfile, seconds: number): CpuProfile {
  const deltas = profile.timeDeltas ?? [];
  const samples = profile.samples ?? [];
  const at: number[] = [];
  let t = 0;
  for (const d of deltas) at.push((t += d));
  const from = t - seconds * 1e6;
  let k = at.findIndex((x) => x >= from);
  if (k < 0) k = samples.length;
  return { nodes: profile.nodes, samples: samples.slice(k), timeDeltas: deltas.slice(k) };
}

export interface CallerTime {
  /** Our code's frames nearest the matched function, innermost first, joined by ` < `. */
  readonly callers: string;
  readonly ms: number;
}

/**
 * Where the time in a function outside our code (or any function) comes from: each sample whose stack holds a
 * function whose name contains `match` counts (its whole time, the callees' included) for the chain of our own
 * frames nearest that function (at most `depth`, innermost first). Most first.
 */
export function callers(profile: CpuProfile, match: string, depth = 3): CallerTime[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const deltas = profile.timeDeltas ?? [];
  const chains = new Map<string, number>();
  (profile.samples ?? []).forEach((id, i) => {
    const us = Math.max(0, deltas[i + 1] ?? 0);
    let at: number | undefined = id;
    let found = false;
    const ours: string[] = [];
    while (at !== undefined && ours.length < depth) {
      const frame = byId.get(at)?.callFrame;
      if (frame === undefined) break;
      if (!found && frameName(frame).includes(match)) found = true;
      else if (found && frame.url.includes(OURS)) ours.push(frameName(frame));
      at = parent.get(at);
    }
    if (!found) return;
    const key = ours.length === 0 ? '(no frame of ours)' : ours.join(' < ');
    chains.set(key, (chains.get(key) ?? 0) + us / 1000);
  });
  return [...chains].map(([c, ms]) => ({ callers: c, ms })).sort((a, b) => b.ms - a.ms);
}

/** Each sample's time (the delta to the next sample, as summarize counts it) and whether it was busy (not idle). */
function sampleTimes(profile: CpuProfile): { at: number[]; us: number[]; busy: boolean[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const deltas = profile.timeDeltas ?? [];
  const at: number[] = [];
  const us: number[] = [];
  const busy: boolean[] = [];
  let t = 0;
  (profile.samples ?? []).forEach((id, i) => {
    t += deltas[i] ?? 0;
    at.push(t);
    us.push(Math.max(0, deltas[i + 1] ?? 0));
    busy.push(byId.get(id)?.callFrame.functionName !== '(idle)');
  });
  return { at, us, busy };
}

/** Busy ms in each `bucketS`-second slice of the profile, from its start. */
export function timeline(profile: CpuProfile, bucketS: number): number[] {
  const { at, us, busy } = sampleTimes(profile);
  const buckets: number[] = [];
  at.forEach((t, i) => {
    const b = Math.floor(t / (bucketS * 1e6));
    while (buckets.length <= b) buckets.push(0);
    if (busy[i] === true) buckets[b] = (buckets[b] ?? 0) + (us[i] ?? 0) / 1000;
  });
  return buckets;
}

/** The profile cut to its `seconds`-long window with the most busy time; `fromS` is where that window starts. */
export function busiestWindow(profile: CpuProfile, seconds: number): { profile: CpuProfile; fromS: number } {
  const { at, us, busy } = sampleTimes(profile);
  const width = seconds * 1e6;
  let best = { from: 0, to: 0, busy: -1 };
  let sum = 0;
  let lo = 0;
  for (let hi = 0; hi < at.length; hi++) {
    if (busy[hi] === true) sum += us[hi] ?? 0;
    while ((at[hi] ?? 0) - (at[lo] ?? 0) >= width) {
      if (busy[lo] === true) sum -= us[lo] ?? 0;
      lo++;
    }
    if (sum > best.busy) best = { from: lo, to: hi + 1, busy: sum };
  }
  const samples = (profile.samples ?? []).slice(best.from, best.to);
  // summarize() attributes to sample i the delta at i + 1.
  const timeDeltas = [0, ...us.slice(best.from, best.to)];
  return { profile: { nodes: profile.nodes, samples, timeDeltas }, fromS: (at[best.from] ?? 0) / 1e6 };
}

/** The report's lines: the categories as shares of the busy time (not idle), then our top functions. */
export function report(s: ProfileSummary, top: number): string[] {
  const busy = s.totalMs - s.categories.idle;
  const pct = (ms: number): string => `${busy > 0 ? ((100 * ms) / busy).toFixed(1) : '0.0'} %`;
  const c = s.categories;
  return [
    `busy ${Math.round(busy)} ms of ${Math.round(s.totalMs)} ms profiled: our code ${pct(c.ours)}, node and libraries ${pct(c.other)}, GC ${pct(c.gc)}, V8/native (program) ${pct(c.program)}`,
    `top self time in our code (share of busy time):`,
    ...s.functions.filter((f) => f.ours).slice(0, top).map((f) => `  ${pct(f.ms).padStart(7)}  ${Math.round(f.ms).toString().padStart(6)} ms  ${f.name}`),
    `top self time outside our code:`,
    ...s.functions.filter((f) => !f.ours && !f.name.startsWith('(idle)')).slice(0, Math.min(top, 10)).map((f) => `  ${pct(f.ms).padStart(7)}  ${Math.round(f.ms).toString().padStart(6)} ms  ${f.name}`),
  ];
}

async function profileFiles(args: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args) {
    if ((await stat(arg)).isDirectory()) files.push(...(await readdir(arg)).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => path.join(arg, f)));
    else files.push(arg);
  }
  return files;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      top: { type: 'string', default: '25' }, callers: { type: 'string', multiple: true }, depth: { type: 'string', default: '3' },
      last: { type: 'string' }, busiest: { type: 'string' }, timeline: { type: 'string' },
    },
    allowPositionals: true,
  });
  const seconds = (flag: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${flag} must be a positive number of seconds, not ${value}`);
    return n;
  };
  const last = seconds('last', values.last);
  const busiest = seconds('busiest', values.busiest);
  const bucket = seconds('timeline', values.timeline);
  if (last !== undefined && busiest !== undefined) throw new Error('--last and --busiest each choose a window: give one of them');
  const depth = Number(values.depth);
  if (!(Number.isInteger(depth) && depth > 0)) throw new Error(`--depth must be a positive whole number, not ${values.depth}`);
  const top = Number(values.top);
  if (!(Number.isInteger(top) && top > 0)) throw new Error(`--top must be a positive whole number, not ${values.top}`);
  if (positionals.length === 0) throw new Error('give the .cpuprofile files or a directory of them (node --cpu-prof-dir)');
  const files = await profileFiles(positionals);
  if (files.length === 0) throw new Error(`no .cpuprofile file in ${positionals.join(', ')}`);
  for (const file of files) {
    const whole = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
    if (bucket !== undefined) process.stdout.write(`${file}: busy ms per ${bucket} s: ${timeline(whole, bucket).map((ms) => Math.round(ms)).join(' ')}\n`);
    const cut = busiest === undefined ? undefined : busiestWindow(whole, busiest);
    const profile = cut?.profile ?? (last === undefined ? whole : lastSeconds(whole, last));
    const where = cut === undefined ? '' : ` (the busiest ${busiest} s, from ${cut.fromS.toFixed(1)} s)`;
    process.stdout.write(`${file}${where}\n${report(summarize(profile), top).join('\n')}\n\n`);
    for (const match of values.callers ?? []) {
      const lines = callers(profile, match, depth).slice(0, top).map((c) => `  ${Math.round(c.ms).toString().padStart(6)} ms  ${c.callers}`);
      process.stdout.write(`time in "${match}" (callees included) by our nearest frames:\n${lines.join('\n')}\n\n`);
    }
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`profile-top: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

/**
 * Where the agent spends a pod's start-up, read from its own log (text format, -v=4): the
 * times of the steps it logs for each pod, relative to when the benchmark wrote the manifest.
 *
 *   | step (log line)                  | what happened before it                                  |
 *   |----------------------------------|----------------------------------------------------------|
 *   | `pod cgroup ensured` (first)     | file notification + that file read, dispatch to the pod   |
 *   |                                  | worker, runtime status (none read for a pod the last      |
 *   |                                  | relist did not see), the pod cgroup made                  |
 *   | `computed pod actions`           | volumes prepared (beside the cgroup)                      |
 *   | `created pod sandbox`            | sandbox config (DNS, cgroup again), RunPodSandbox (+ its  |
 *   |                                  | status off the host network); meanwhile the first         |
 *   |                                  | container's image check, mounts and files                 |
 *   | `started container`              | CreateContainer + StartContainer                          |
 *
 * Log times have millisecond resolution (UTC, no year: the write's year is used).
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { percentile } from './cri-floor.js';

export const STEPS = ['cgroup', 'actions', 'sandbox', 'started'] as const;
export type Step = (typeof STEPS)[number];

/** What each step's duration is called in reports (the time since the previous step). */
export const STEP_LABELS: Readonly<Record<Step, string>> = {
  cgroup: 'write->cgroup',
  actions: '->actions',
  sandbox: '->sandbox',
  started: '->started',
};

const LINE = /^[IWE](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ [^\]]*\] (.*)$/;

function stepOf(message: string): { step: Step; key: string } | undefined {
  if (message.startsWith('pod cgroup ensured ')) {
    const uid = /podUID="([^"]+)"/.exec(message)?.[1];
    return uid === undefined ? undefined : { step: 'cgroup', key: `uid:${uid}` };
  }
  const pod = /pod="([^"]+)"/.exec(message)?.[1];
  if (pod === undefined) return undefined;
  if (message.startsWith('computed pod actions ')) return { step: 'actions', key: pod };
  if (message.startsWith('created pod sandbox ')) return { step: 'sandbox', key: pod };
  if (message.startsWith('started container ')) return { step: 'started', key: pod };
  return undefined;
}

/** `name_namespace(uid)` as the agent formats pods -> name and uid. */
function splitFormatted(pod: string): { name: string; uid: string } | undefined {
  const m = /^(.*)_[^_(]*\(([^)]*)\)$/.exec(pod);
  return m === null ? undefined : { name: m[1] ?? '', uid: m[2] ?? '' };
}

/** For each pod name: the epoch ms at which each step was first logged at or after `sinceMs`. */
export function stepTimes(log: string, sinceMs: number): Map<string, Partial<Record<Step, number>>> {
  const year = new Date(sinceMs).getUTCFullYear();
  const byUid = new Map<string, Partial<Record<Step, number>>>();
  const nameOfUid = new Map<string, string>();
  for (const line of log.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    const [, mo, d, h, mi, s, us, message] = m;
    const at = Date.UTC(year, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(Number(us) / 1000));
    // Lines are stamped to the millisecond (truncated): keep those of the same millisecond as the write.
    if (at < Math.floor(sinceMs) || message === undefined) continue;
    const found = stepOf(message);
    if (found === undefined) continue;
    let uid = found.key.startsWith('uid:') ? found.key.slice(4) : undefined;
    if (uid === undefined) {
      const pod = splitFormatted(found.key);
      if (pod === undefined) continue;
      uid = pod.uid;
      nameOfUid.set(uid, pod.name);
    }
    const steps = byUid.get(uid) ?? {};
    steps[found.step] ??= at;
    byUid.set(uid, steps);
  }
  const byName = new Map<string, Partial<Record<Step, number>>>();
  for (const [uid, steps] of byUid) {
    const name = nameOfUid.get(uid);
    if (name !== undefined) byName.set(name, steps);
  }
  return byName;
}

/**
 * The agent's log once it holds every step of the given pods (the bench may see a container
 * running before the agent, its event loop busy, gets to log it), or as it is after `timeoutMs`.
 */
export async function readCompleteLog(file: string, writtenAt: ReadonlyMap<string, number>, timeoutMs = 10_000): Promise<string> {
  const since = Math.min(...writtenAt.values());
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const log = await readFile(file, 'utf8');
    const times = stepTimes(log, since);
    const complete = [...writtenAt.keys()].every((name) => STEPS.every((s) => times.get(name)?.[s] !== undefined));
    if (complete || performance.now() > deadline) return log;
    await delay(50);
  }
}

export interface StepBreakdown {
  /** Pods whose four steps were all found. */
  readonly pods: number;
  /** p50 and max of each step's duration (since the previous step, the first since the write), ms. */
  readonly steps: readonly { readonly step: Step; readonly p50Ms: number; readonly maxMs: number }[];
  /** p50 of the pod's end point (the container's startedAt; in a burst, the poll that saw it) minus `started container` (log times are whole ms), ms. */
  readonly seenAfterStartedP50Ms: number;
}

/**
 * The p50 and max of each step over pods written at `writtenAt` (epoch ms, per pod name) and
 * running at `seenAt` (epoch ms, per pod name).
 */
export function breakdown(log: string, writtenAt: ReadonlyMap<string, number>, seenAt: ReadonlyMap<string, number>): StepBreakdown {
  const since = Math.min(...writtenAt.values());
  const times = stepTimes(log, since);
  const durations = new Map<Step, number[]>(STEPS.map((s) => [s, []]));
  const seenAfter: number[] = [];
  let pods = 0;
  for (const [name, written] of writtenAt) {
    const t = times.get(name);
    if (t === undefined || STEPS.some((s) => t[s] === undefined)) continue;
    pods++;
    let previous = written;
    for (const step of STEPS) {
      const at = t[step] ?? previous;
      durations.get(step)?.push(at - previous);
      previous = at;
    }
    const seen = seenAt.get(name);
    if (seen !== undefined) seenAfter.push(seen - previous);
  }
  return {
    pods,
    steps: STEPS.map((step) => {
      const values = durations.get(step) ?? [];
      return { step, p50Ms: percentile(values, 50), maxMs: percentile(values, 100) };
    }),
    seenAfterStartedP50Ms: percentile(seenAfter, 50),
  };
}

/** One line: `write->cgroup 112/140 ms, ->actions ...` (p50/max). */
export function formatBreakdown(b: StepBreakdown): string {
  const parts = b.steps.map((s) => `${STEP_LABELS[s.step]} ${Math.round(s.p50Ms)}/${Math.round(s.maxMs)}`);
  return `${parts.join(', ')} ms (p50/max over ${b.pods} pods); end point ${Math.round(b.seenAfterStartedP50Ms)} ms from \`started container\``;
}

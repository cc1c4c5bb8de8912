/**
 * The markdown tables of the agent-apiserver benchmark: pods created one after another (raw CRI
 * floor, kubectl create -> Running, created -> Running, kubectl alone), and optionally many at
 * once. Information only: no target is enforced.
 */
import type { AgentApiServerResult } from './agent-apiserver.js';
import { percentile } from './cri-floor.js';

const ms = (v: number): string => `${Math.round(v)} ms`;
const signed = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.round(Math.abs(v))} ms`;
const s = (v: number): string => `${(v / 1000).toFixed(2)} s`;

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** The tables and a few lines of detail under them. */
export function formatAgentApiServerTable(r: AgentApiServerResult): string[] {
  const seq = r.sequential;
  const n = seq.length;
  const p = (values: readonly number[]): [number, number] => [percentile(values, 50), percentile(values, 99)];
  const [runP50, runP99] = p(seq.map((x) => x.toRunningMs));
  const [addP50, addP99] = p(seq.map((x) => x.addedToRunningMs));
  const [kcP50, kcP99] = p(seq.map((x) => x.kubectlMs));
  const [toAddP50, toAddP99] = p(seq.map((x) => x.toAddedMs));
  const lines = [
    `### nodeagent + orch-apiserver (${r.storage}): kubectl create → Running, ${n} pods one after another (host network, busybox sleep, image present)`,
    '',
    '| measure | p50 | p99 | p50 − raw p50 | p99 − raw p99 |',
    '|---|---:|---:|---:|---:|',
    row(['raw CRI floor (same run): RunPodSandbox + CreateContainer + StartContainer', ms(r.raw.p50Ms), ms(r.raw.p99Ms), '', '']),
    row(['kubectl create → Running on the watch', ms(runP50), ms(runP99), signed(runP50 - r.raw.p50Ms), signed(runP99 - r.raw.p99Ms)]),
    row(['created (ADDED on the watch) → Running on the watch', ms(addP50), ms(addP99), signed(addP50 - r.raw.p50Ms), signed(addP99 - r.raw.p99Ms)]),
    row(['kubectl create alone (spawn → exit)', ms(kcP50), ms(kcP99), '', '']),
    row(['kubectl spawn → ADDED on the watch', ms(toAddP50), ms(toAddP99), '', '']),
  ];
  const b = r.burst;
  const best = r.rawBurstBest;
  if (b !== undefined && best !== undefined) {
    const [bP50, bP99] = p(b.addedToRunningMs);
    const others = r.rawBurst.filter((x) => x !== best).map((x) => `${x.concurrency}: ${s(x.totalMs)}`).join(', ');
    lines.push(
      '',
      `### ${b.pods} pods at once (one \`kubectl create -f <directory>\`)`,
      '',
      '| measure | total | per pod p50 | per pod p99 |',
      '|---|---:|---:|---:|',
      row([`raw CRI, ${best.concurrency} in flight (best${others === '' ? '' : `; ${others}`})`, s(best.totalMs), ms(best.p50Ms), ms(best.p99Ms)]),
      row(['kubectl spawn → all Running on the watch; per pod: ADDED → Running', s(b.totalMs), ms(bP50), ms(bP99)]),
      row(['kubectl create -f <directory> alone (spawn → exit)', s(b.kubectlMs), '', '']),
      '',
      `- ratio of the totals: ${(b.totalMs / best.totalMs).toFixed(2)}×`,
    );
  }
  const { runPodSandbox, createContainer, startContainer } = r.raw.phases;
  lines.push(
    '',
    `- raw p50 per call: RunPodSandbox ${ms(runPodSandbox.p50Ms)}, CreateContainer ${ms(createContainer.p50Ms)}, StartContainer ${ms(startContainer.p50Ms)}`,
    `- node Ready in the API server ${s(r.nodeReadyMs)} after the agent was spawned; pods deleted between phases (kubectl delete pods --all)`,
    `- load average (1 min) at the start ${r.loadAverage.start.toFixed(2)}, at the end ${r.loadAverage.end.toFixed(2)} on ${r.cpus} CPUs shared with other work: the numbers are noisy`,
    `- agent log: ${r.agentLog}`,
  );
  return lines;
}

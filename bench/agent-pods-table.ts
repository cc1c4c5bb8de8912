/**
 * The markdown table of one network's agent-pods results, with the targets next to the
 * numbers and whether each is met (information only: nothing fails on a target).
 */
import type { AgentPodsResult } from './agent-pods.js';
import { formatBreakdown } from './agent-log.js';

/** The targets of nodeagent against the raw floor measured in the same run. */
export const TARGETS = {
  /** (b) p50 at most this much above (a) p50, ms. */
  p50OverheadMs: 30,
  /** (b) p99 at most this much above (a) p99, ms. */
  p99OverheadMs: 150,
  /** (c) agent total at most this many times the best raw total. */
  burstRatio: 1.15,
  /** (d) */
  rssMiB: 80,
  cpuPercent: 1,
} as const;

const ms = (v: number): string => `${Math.round(v)} ms`;
const s = (v: number): string => `${(v / 1000).toFixed(1)} s`;
const signed = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.round(Math.abs(v))} ms`;
const met = (ok: boolean): string => (ok ? 'yes' : '**no**');

/** The table and a few lines of detail under it. */
export function formatAgentPodsTable(r: AgentPodsResult): string[] {
  const title = r.network === 'host' ? 'host network' : 'CNI (bridge)';
  const p50Diff = r.agent.p50Ms - r.raw.p50Ms;
  const p99Diff = r.agent.p99Ms - r.raw.p99Ms;
  const ratio = r.agentBurst.totalMs / r.rawBurstMedian.totalMs;
  const byConcurrency = new Map<number, string[]>();
  for (const b of r.rawBurst) byConcurrency.set(b.concurrency, [...(byConcurrency.get(b.concurrency) ?? []), s(b.totalMs)]);
  const pilot = [...byConcurrency].map(([c, totals]) => `${c}: ${totals.join(', ')}`).join('; ');
  const rounds = r.burstRounds.map((b) => `${s(b.raw.totalMs)} → ${s(b.agentMs)} (${(b.agentMs / b.raw.totalMs).toFixed(2)}×)`).join(', ');
  const median = r.burstRounds.length === 1 ? '' : `, median of ${r.burstRounds.length} rounds`;
  const idle = `${r.agentIdle.seconds} s`;
  const n = r.agent.pods;
  const rows: string[][] = [
    [`(a)/(b) pod start p50, ${n} one after another`, ms(r.raw.p50Ms), ms(r.agent.p50Ms), signed(p50Diff), `≤ +${TARGETS.p50OverheadMs} ms`, met(p50Diff <= TARGETS.p50OverheadMs)],
    [`(a)/(b) pod start p99, ${n} one after another`, ms(r.raw.p99Ms), ms(r.agent.p99Ms), signed(p99Diff), `≤ +${TARGETS.p99OverheadMs} ms`, met(p99Diff <= TARGETS.p99OverheadMs)],
    [
      `(c) ${r.agentBurst.pods} pods at once, total${median}`,
      `${s(r.rawBurstMedian.totalMs)} (${r.rawBurstMedian.concurrency} in flight)`,
      s(r.agentBurst.totalMs),
      `${ratio.toFixed(2)}×`,
      `≤ ${TARGETS.burstRatio}×`,
      met(ratio <= TARGETS.burstRatio),
    ],
    [`(d) RSS, ${r.agentBurst.pods} pods, idle ${idle}`, '', `${r.agentIdle.rssMiB.toFixed(1)} MiB (window start ${r.agentIdle.rssStartMiB.toFixed(1)}, max ${r.agentIdle.rssMaxMiB.toFixed(1)})`, '', `≤ ${TARGETS.rssMiB} MiB`, met(r.agentIdle.rssMiB <= TARGETS.rssMiB)],
    [
      `(d) CPU, ${r.agentBurst.pods} pods, idle ${idle}`,
      `containerd: ${r.containerdIdle.cpuPercent.toFixed(2)} %`,
      `${r.agentIdle.cpuPercent.toFixed(2)} %`,
      '',
      `≤ ${TARGETS.cpuPercent} % of a core`,
      met(r.agentIdle.cpuPercent <= TARGETS.cpuPercent),
    ],
  ];
  const { runPodSandbox, createContainer, startContainer } = r.raw.phases;
  return [
    `### nodeagent vs the raw CRI floor: ${title} (busybox sleep, image present)`,
    '',
    '| measure | raw CRI (same run) | nodeagent | difference | target | met |',
    '|---|---:|---:|---:|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
    `- (a) raw p50 per call: RunPodSandbox ${ms(runPodSandbox.p50Ms)}, CreateContainer ${ms(createContainer.p50Ms)}, StartContainer ${ms(startContainer.p50Ms)}`,
    `- (b) agent steps from its log: ${formatBreakdown(r.agent.steps)}; ${r.agent.pollsPerPod.toFixed(0)} ListContainers polls per pod`,
    `- (c) rounds, raw → agent: ${rounds}; the pilot's raw bursts by pods in flight (their means choose the rounds' concurrency): ${pilot}`,
    `- (c) last round, agent steps from its log: ${formatBreakdown(r.agentBurst.steps)}; CPU over the burst: agent ${r.agentBurst.agentPercent.toFixed(0)} %, containerd ${r.agentBurst.containerdPercent.toFixed(0)} % of a core; the machine's steal time in the median round: ${r.steal.rawBursts.toFixed(0)} % over the raw bursts, ${r.steal.agentBurst.toFixed(0)} % over the agent's`,
    `- (d) containerd RSS ${r.containerdIdle.rssMiB.toFixed(1)} MiB in the same window; the machine's steal time ${r.steal.idle.toFixed(0)} % meanwhile; agent log: ${r.agentLog}`,
  ];
}

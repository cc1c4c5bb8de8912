/** Pieces the node overview and a node's page share: the status pills, resource rows, lease age. */
import { resourceBar, sparkline } from '../chart.js';
import { ago, h, pill } from '../dom.js';
import { formatAge } from '../format.js';
import type { Hub } from '../hub.js';
import { METRICS_WINDOW_MS } from '../hub.js';
import { timeOf, type Lease, type Node, type Taint } from '../kube.js';
import { leaseAge, nodeHealth, type ResourceUse } from '../model.js';
import { formatResource } from '../quantity.js';

export function taintText(t: Taint): string {
  return `${t.key ?? ''}${t.value === undefined || t.value === '' ? '' : `=${t.value}`}:${t.effect ?? ''}`;
}

/** The Ready pill, the pressure pills and cordon/taint chips of a node. */
export function nodePills(node: Node): HTMLElement[] {
  const health = nodeHealth(node);
  const title = [health.reason, health.message].filter((s) => s !== '').join(': ');
  return [
    pill(health.ready === 'True' ? 'Ready' : health.ready === 'False' ? 'NotReady' : 'Unknown', health.tone === 'warn' ? 'ok' : health.tone, title),
    ...health.pressures.map((p) => pill(p, 'warn')),
    ...(node.spec?.unschedulable === true ? [pill('Cordoned', 'warn')] : []),
  ];
}

export function taintChips(node: Node): HTMLElement | undefined {
  const taints = node.spec?.taints ?? [];
  if (taints.length === 0) return undefined;
  return h('div', { class: 'chips' }, ...taints.map((t) => h('span', { class: `chip effect-${(t.effect ?? '').toLowerCase()}`, title: 'taint' }, taintText(t))));
}

/** One resource row: name, bar (requested of allocatable, system reserve hatched), figures, usage sparkline. */
export function resourceRow(
  hub: Hub, resource: 'cpu' | 'memory' | 'pods', node: string, use: ResourceUse, now: number, chart: { width: number; height: number },
): HTMLElement {
  const fmt = (v: number | undefined): string => (v === undefined ? '-' : formatResource(resource, v));
  const title = `${resource}: requested ${fmt(use.requested)} of allocatable ${fmt(use.allocatable)} (capacity ${fmt(use.capacity)})`;
  const row = h('div', { class: 'res-row', 'data-resource': resource },
    h('span', { class: 'res-name' }, resource === 'cpu' ? 'CPU' : resource === 'memory' ? 'Memory' : 'Pods'),
    resourceBar(use.requested, use.allocatable, use.capacity, title),
    h('span', { class: 'res-figures', title }, `${fmt(use.requested)} / ${fmt(use.allocatable)}`, h('span', { class: 'dim' }, ` of ${fmt(use.capacity)}`)));
  if (resource === 'pods') {
    row.appendChild(h('span', { class: 'res-usage' }));
    return row;
  }
  const samples = hub.history.get(`node/${node}/${resource}`);
  const last = samples[samples.length - 1];
  const label = last === undefined ? `${resource} usage: no sample yet` : `${resource} usage now ${formatResource(resource, last.v)} (last ${METRICS_WINDOW_MS / 60_000} minutes)`;
  row.appendChild(h('span', { class: 'res-usage', title: label },
    sparkline(samples, { ...chart, windowMs: METRICS_WINDOW_MS, now, max: use.allocatable ?? use.capacity ?? 0, label }),
    h('span', { class: 'usage-now' }, last === undefined ? '–' : formatResource(resource, last.v))));
  return row;
}

/** "lease renewed 3s ago", refreshed every second; red once older than its duration (the agent stopped renewing it). */
export function leaseBadge(lease: Lease | undefined, now: number): HTMLElement {
  const renewed = timeOf(lease?.spec?.renewTime);
  if (renewed === undefined) return h('span', { class: 'lease' }, 'no lease');
  const limitMs = (lease?.spec?.leaseDurationSeconds ?? 40) * 1000;
  const el = ago(renewed, now, formatAge, 'lease renewed ', ' ago');
  el.classList.add('lease');
  el.dataset.limit = String(limitMs);
  el.classList.toggle('expired', leaseAge(lease, now).expired);
  el.title = `held by ${lease?.spec?.holderIdentity ?? '-'}, duration ${limitMs / 1000} s`;
  return el;
}

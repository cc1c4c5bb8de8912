/**
 * The overview: the cluster at a glance (nodes ready, pods by health, requests against
 * allocatable, recent warnings) and a card per node with its conditions, taints, resources
 * (requested against allocatable and capacity, live usage over the last minutes) and lease age.
 */
import { ago, h, refreshTimes, replace } from '../dom.js';
import { formatAge } from '../format.js';
import type { Node } from '../kube.js';
import { nodeHealth, nodeResources, requestsByNode, type Tone } from '../model.js';
import { formatBytes, formatCores } from '../quantity.js';
import { redrawOn, type View, type ViewContext } from './context.js';
import { leaseBadge, nodePills, resourceRow, taintChips } from './node-parts.js';
import { stateNote } from './notes.js';

const CARD_CHART = { width: 120, height: 28 };
const TONE_ORDER: Readonly<Record<Tone, number>> = { bad: 0, unknown: 1, warn: 2, ok: 3 };

function tile(label: string, value: string, detail: string, tone: Tone | 'plain'): HTMLElement {
  return h('div', { class: `tile tone-${tone}` }, h('div', { class: 'tile-value' }, value), h('div', { class: 'tile-label' }, label), h('div', { class: 'tile-detail' }, detail));
}

export function nodesView(ctx: ViewContext): View {
  const hub = ctx.hub;
  const release = hub.acquireNodeData();
  const tiles = h('section', { class: 'tiles', 'aria-label': 'cluster summary' });
  const note = h('div', { class: 'notes' });
  const grid = h('section', { class: 'cards', 'aria-label': 'nodes' });
  const emptyNote = h('p', { class: 'empty' }, 'No node has registered yet.');
  emptyNote.hidden = true;
  const element = h('div', { class: 'view view-nodes' }, h('h1', {}, 'Cluster'), tiles, note, emptyNote, grid);
  /** Each node's card and what it was drawn from: a card is rebuilt only when that changed. */
  const cards = new Map<string, { el: HTMLElement; drawnFrom: string }>();

  const draw = (): void => {
    const now = ctx.now();
    const nodes = [...hub.nodes.items.values()];
    const sums = requestsByNode(hub.pods.items.values());
    let ready = 0;
    let allocCpu = 0;
    let allocMem = 0;
    for (const n of nodes) {
      if (nodeHealth(n).ready === 'True') ready++;
      const r = nodeResources(n, undefined);
      allocCpu += r.cpu.allocatable ?? 0;
      allocMem += r.memory.allocatable ?? 0;
    }
    let reqCpu = 0;
    let reqMem = 0;
    for (const s of sums.values()) {
      reqCpu += s.cpu;
      reqMem += s.memory;
    }
    const byTone = { ok: 0, warn: 0, bad: 0, unknown: 0 };
    for (const p of hub.pods.items.values()) byTone[p.tone]++;
    let warnings = 0;
    for (const e of hub.events.items.values()) if (e.type === 'Warning' && now - e.last < 3_600_000) warnings++;
    const pct = (a: number, b: number): string => (b <= 0 ? '-' : `${Math.round((a / b) * 100)}%`);
    replace(tiles,
      tile('nodes ready', `${ready}/${nodes.length}`, nodes.length - ready === 0 ? 'all healthy' : `${nodes.length - ready} not ready`, ready === nodes.length ? 'ok' : 'bad'),
      tile('pods', String(hub.pods.items.size), `${byTone.ok} healthy · ${byTone.warn} pending · ${byTone.bad} failing`, byTone.bad > 0 ? 'bad' : byTone.warn > 0 ? 'warn' : 'ok'),
      tile('CPU requested', pct(reqCpu, allocCpu), `${formatCores(reqCpu)} of ${formatCores(allocCpu)} allocatable`, 'plain'),
      tile('memory requested', pct(reqMem, allocMem), `${formatBytes(reqMem)} of ${formatBytes(allocMem)} allocatable`, 'plain'),
      tile('warnings, last hour', String(warnings), 'events of type Warning', warnings > 0 ? 'warn' : 'ok'));
    replace(note, stateNote('nodes', hub.nodes.state), stateNote('node leases', hub.leases.state),
      hub.metrics.error === '' ? undefined : h('p', { class: 'note warn' }, `Live usage unavailable: ${hub.metrics.error}`));
    nodes.sort((a, b) => TONE_ORDER[nodeHealth(a).tone] - TONE_ORDER[nodeHealth(b).tone] || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    const shown = new Set<string>();
    let previous: Element | null = null;
    for (const n of nodes) {
      const name = n.metadata?.name ?? '';
      shown.add(name);
      const sum = sums.get(name);
      const lease = hub.leases.items.get(`orch-node-lease/${name}`);
      const drawnFrom = [n.metadata?.resourceVersion, sum?.cpu, sum?.memory, sum?.count, lease?.metadata?.resourceVersion, hub.metrics.lastMs].join('|');
      let entry = cards.get(name);
      if (entry?.drawnFrom !== drawnFrom) {
        const el = card(n);
        if (entry === undefined) grid.appendChild(el);
        else entry.el.replaceWith(el);
        entry = { el, drawnFrom };
        cards.set(name, entry);
      }
      const expected: Element | null = previous === null ? grid.firstElementChild : previous.nextElementSibling;
      if (expected !== entry.el) grid.insertBefore(entry.el, expected);
      previous = entry.el;
    }
    for (const [name, entry] of cards) {
      if (shown.has(name)) continue;
      entry.el.remove();
      cards.delete(name);
    }
    emptyNote.hidden = !(nodes.length === 0 && hub.nodes.synced);

    function card(n: Node): HTMLElement {
      const name = n.metadata?.name ?? '';
      const health = nodeHealth(n);
      const use = nodeResources(n, sums.get(name));
      const created = Date.parse(n.metadata?.creationTimestamp ?? '');
      return h('article', { class: `card node-card tone-${health.tone}`, 'data-node': name, 'data-ready': health.ready },
        h('header', { class: 'card-head' },
          h('a', { class: 'card-title', href: `#/nodes/${encodeURIComponent(name)}` }, name),
          h('span', { class: 'pills' }, ...nodePills(n))),
        health.ready !== 'True' && health.message !== '' ? h('p', { class: 'card-message' }, health.message) : undefined,
        taintChips(n),
        h('div', { class: 'res' }, ...(['cpu', 'memory', 'pods'] as const).map((r) => resourceRow(hub, r, name, use[r], now, CARD_CHART))),
        h('footer', { class: 'card-foot' },
          leaseBadge(hub.leases.items.get(`orch-node-lease/${name}`), now),
          h('span', { class: 'dim' }, n.status?.nodeInfo?.kubeletVersion ?? ''),
          h('span', { class: 'dim' }, ago(Number.isNaN(created) ? undefined : created, now, formatAge, 'age '))));
    }
  };
  const stop = redrawOn(ctx, [hub.nodes, hub.pods, hub.events, hub.leases, { subscribe: (l) => hub.onMetrics(l) }], draw, {
    minGapMs: 300,
    tick: () => {
      refreshTimes(element, ctx.now(), formatAge);
    },
  });
  return {
    element, title: 'Cluster',
    dispose() {
      stop();
      release();
    },
  };
}


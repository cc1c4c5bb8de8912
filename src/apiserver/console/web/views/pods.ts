/**
 * Every pod of the cluster in one virtualised list (thousands stay smooth): namespace, name,
 * readiness, status, restarts, age, node and the pod's last event; filtered by namespace, node,
 * problems only and a search of the name.
 */
import { h, setText } from '../dom.js';
import { ageSince } from '../format.js';
import { latestEvents, type EventRow, type PodRow } from '../model.js';
import { VirtualList } from '../virtual-list.js';
import { redrawOn, type View, type ViewContext } from './context.js';
import { filterBar } from './filters.js';
import { stateNote } from './notes.js';

const ROW_HEIGHT = 36;
const COLUMNS = ['Namespace', 'Name', 'Ready', 'Status', 'Restarts', 'Age', 'Node', 'Last event'];

export function podHref(p: { namespace: string; name: string }): string {
  return `#/pods/${encodeURIComponent(p.namespace)}/${encodeURIComponent(p.name)}`;
}

export function podLink(p: PodRow): HTMLAnchorElement {
  return h('a', { href: podHref(p) }, p.name);
}

export function podsView(ctx: ViewContext, query: URLSearchParams): View {
  const hub = ctx.hub;
  let lastEvents = new Map<string, EventRow>();
  const list = new VirtualList<PodRow>({
    className: 'grid-pods',
    rowHeight: ROW_HEIGHT,
    empty: 'No pod matches.',
    createRow(row) {
      for (const c of ['ns', 'name', 'ready', 'status', 'restarts', 'age', 'node', 'event']) row.appendChild(h('span', { class: `c-${c}` }));
    },
    fillRow(row, p) {
      const cells = row.children;
      row.dataset.key = p.key;
      row.dataset.tone = p.tone;
      setText(cells[0] as Element, p.namespace);
      setText(cells[1] as Element, p.name);
      setText(cells[2] as Element, `${p.ready}/${p.total}`);
      const status = cells[3] as HTMLElement;
      setText(status, p.status);
      status.className = `c-status pill tone-${p.tone}`;
      setText(cells[4] as Element, String(p.restarts));
      (cells[5] as HTMLElement).dataset.since = String(p.created ?? '');
      setText(cells[5] as Element, ageSince(p.created, ctx.now()));
      setText(cells[6] as Element, p.node === '' ? '<unscheduled>' : p.node);
      const e = lastEvents.get(p.key);
      const event = cells[7] as HTMLElement;
      setText(event, e === undefined ? '' : `${e.reason}: ${e.note}`);
      event.classList.toggle('warning', e?.type === 'Warning');
      event.title = e === undefined ? '' : `${e.reason}: ${e.note}`;
    },
    onOpen(p) {
      location.hash = podHref(p);
    },
  });
  const count = h('span', { class: 'count' });
  const note = h('div', { class: 'notes' });
  const filters = filterBar([
    { name: 'ns', label: 'Namespace', kind: 'select', all: 'all namespaces' },
    { name: 'node', label: 'Node', kind: 'select', all: 'all nodes' },
    { name: 'problems', label: 'problems only', kind: 'toggle' },
    { name: 'q', label: 'Search pods', kind: 'search' },
  ], query, 'pods', () => {
    draw();
  });
  const head = h('div', { class: 'vhead grid-pods', role: 'presentation' }, ...COLUMNS.map((c) => h('span', {}, c)));
  const element = h('div', { class: 'view view-pods' },
    h('div', { class: 'view-head' }, h('h1', {}, 'Pods'), count), filters.element, note, h('div', { class: 'table-frame' }, head, list.element));

  // Sorting thousands of pods is the costly part of a redraw: the order of the keys is kept
  // while the set of pods stays the same, and only the rows are looked up again.
  let order: string[] = [];
  function current(): PodRow[] {
    const all = hub.pods.items;
    if (order.length === all.size) {
      const rows: PodRow[] = [];
      for (const key of order) {
        const row = all.get(key);
        if (row === undefined) break;
        rows.push(row);
      }
      if (rows.length === order.length) return rows;
    }
    const rows = [...all.values()].sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    order = rows.map((p) => p.key);
    return rows;
  }
  function draw(): void {
    const all = hub.pods.items;
    const sorted = current();
    const ns = filters.value('ns');
    const node = filters.value('node');
    const problems = filters.value('problems') === '1';
    const q = filters.value('q').trim().toLowerCase();
    const shown = sorted.filter((p) => (ns === '' || p.namespace === ns) && (node === '' || p.node === node)
      && (!problems || p.tone !== 'ok') && (q === '' || p.name.toLowerCase().includes(q) || p.status.toLowerCase().includes(q)));
    lastEvents = latestEvents(hub.events.items.values(), 'Pod');
    filters.options('ns', [...new Set(sorted.map((p) => p.namespace))]);
    filters.options('node', [...hub.nodes.items.keys()]);
    setText(count, shown.length === all.size ? `${all.size}` : `${shown.length} of ${all.size}`);
    const notes = [stateNote('pods', hub.pods.state), stateNote('events', hub.events.state)].filter((n) => n !== undefined);
    note.replaceChildren(...notes);
    list.setItems(shown);
    // Rows whose pod did not change keep their last event: refill the visible ones.
    list.refresh();
  }
  const stop = redrawOn(ctx, [hub.pods, hub.events, hub.nodes], draw, {
    minGapMs: 100,
    tick: () => {
      for (const el of list.element.querySelectorAll<HTMLElement>('.c-age[data-since]')) {
        const since = Number(el.dataset.since);
        setText(el, ageSince(Number.isFinite(since) && el.dataset.since !== '' ? since : undefined, ctx.now()));
      }
    },
  });
  return {
    element, title: 'Pods',
    dispose() {
      stop();
      list.dispose();
    },
  };
}

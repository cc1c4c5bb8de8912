/** The cluster's events as they come, newest first, in a virtualised list filtered by type, namespace, kind and text. */
import { h, setText } from '../dom.js';
import { formatAge } from '../format.js';
import type { EventRow } from '../model.js';
import { VirtualList } from '../virtual-list.js';
import { redrawOn, type View, type ViewContext } from './context.js';
import { filterBar } from './filters.js';
import { stateNote } from './notes.js';

const ROW_HEIGHT = 36;
const COLUMNS = ['Last seen', 'Type', 'Namespace', 'Object', 'Reason', 'Message', 'Count', 'Source'];

function objectHref(e: EventRow): string | undefined {
  if (e.kind === 'Pod') return `#/pods/${encodeURIComponent(e.objectNamespace)}/${encodeURIComponent(e.objectName)}`;
  if (e.kind === 'Node') return `#/nodes/${encodeURIComponent(e.objectName)}`;
  return undefined;
}

export function eventsView(ctx: ViewContext, query: URLSearchParams): View {
  const hub = ctx.hub;
  const list = new VirtualList<EventRow>({
    className: 'grid-events',
    rowHeight: ROW_HEIGHT,
    empty: 'No event matches.',
    createRow(row) {
      for (const c of ['age', 'type', 'ns', 'object', 'reason', 'note', 'count', 'source']) row.appendChild(h('span', { class: `c-${c}` }));
    },
    fillRow(row, e) {
      const cells = row.children;
      row.dataset.key = e.key;
      row.dataset.type = e.type;
      const age = cells[0] as HTMLElement;
      age.dataset.since = String(e.last);
      setText(age, formatAge(ctx.now() - e.last));
      setText(cells[1] as Element, e.type);
      setText(cells[2] as Element, e.namespace);
      setText(cells[3] as Element, `${e.kind.toLowerCase()}/${e.objectName}`);
      setText(cells[4] as Element, e.reason);
      const note = cells[5] as HTMLElement;
      setText(note, e.note);
      note.title = e.note;
      setText(cells[6] as Element, String(e.count));
      setText(cells[7] as Element, e.source);
    },
    onOpen(e) {
      const href = objectHref(e);
      if (href !== undefined) location.hash = href;
    },
  });
  const count = h('span', { class: 'count' });
  const note = h('div', { class: 'notes' });
  const filters = filterBar([
    { name: 'type', label: 'Type', kind: 'select', all: 'all types' },
    { name: 'ns', label: 'Namespace', kind: 'select', all: 'all namespaces' },
    { name: 'kind', label: 'Kind', kind: 'select', all: 'all kinds' },
    { name: 'q', label: 'Search events', kind: 'search' },
  ], query, 'events', () => {
    draw();
  });
  filters.options('type', ['Normal', 'Warning']);
  const head = h('div', { class: 'vhead grid-events', role: 'presentation' }, ...COLUMNS.map((c) => h('span', {}, c)));
  const element = h('div', { class: 'view view-events' },
    h('div', { class: 'view-head' }, h('h1', {}, 'Events'), count), filters.element, note, h('div', { class: 'table-frame' }, head, list.element));

  function draw(): void {
    const all = [...hub.events.items.values()];
    const type = filters.value('type');
    const ns = filters.value('ns');
    const kind = filters.value('kind');
    const q = filters.value('q').trim().toLowerCase();
    const shown = all.filter((e) => (type === '' || e.type === type) && (ns === '' || e.namespace === ns) && (kind === '' || e.kind === kind) && (q === '' || e.text.includes(q)));
    shown.sort((a, b) => b.last - a.last || (a.key < b.key ? -1 : 1));
    filters.options('ns', [...new Set(all.map((e) => e.namespace))]);
    filters.options('kind', [...new Set(all.map((e) => e.kind))]);
    setText(count, shown.length === all.length ? `${all.length}` : `${shown.length} of ${all.length}`);
    note.replaceChildren(...[stateNote('events', hub.events.state)].filter((n) => n !== undefined));
    list.setItems(shown);
  }
  const stop = redrawOn(ctx, [hub.events], draw, {
    minGapMs: 100,
    tick: () => {
      for (const el of list.element.querySelectorAll<HTMLElement>('.c-age[data-since]')) setText(el, formatAge(ctx.now() - Number(el.dataset.since)));
    },
  });
  return {
    element, title: 'Events',
    dispose() {
      stop();
      list.dispose();
    },
  };
}

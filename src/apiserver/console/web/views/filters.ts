/** The filter bar of the lists: selects and a search box whose values live in the URL's hash query. */
import { h, replace } from '../dom.js';

export interface FilterBar {
  readonly element: HTMLElement;
  value(name: string): string;
  /** Refills a select's options (keeping its value). */
  options(name: string, values: readonly string[]): void;
}

export interface FilterSpec {
  readonly name: string;
  readonly label: string;
  readonly kind: 'select' | 'search' | 'toggle';
  /** For selects: the label of the empty value. */
  readonly all?: string;
}

/** The filter bar; `onChange` runs after any change (the hash query is updated without a navigation). */
export function filterBar(specs: readonly FilterSpec[], initial: URLSearchParams, route: string, onChange: () => void): FilterBar {
  const controls = new Map<string, HTMLInputElement | HTMLSelectElement>();
  const changed = (): void => {
    const q = new URLSearchParams();
    for (const [name, c] of controls) {
      const v = c instanceof HTMLInputElement && c.type === 'checkbox' ? (c.checked ? '1' : '') : c.value;
      if (v !== '') q.set(name, v);
    }
    const query = q.toString();
    history.replaceState(null, '', `#/${route}${query === '' ? '' : `?${query}`}`);
    onChange();
  };
  const parts = specs.map((s) => {
    const id = `filter-${s.name}`;
    if (s.kind === 'select') {
      const select = h('select', { id, name: s.name, onchange: changed }, h('option', { value: '' }, s.all ?? 'all'));
      const v = initial.get(s.name) ?? '';
      if (v !== '') select.appendChild(h('option', { value: v }, v));
      select.value = v;
      controls.set(s.name, select);
      return h('label', { class: 'filter' }, h('span', {}, s.label), select);
    }
    if (s.kind === 'toggle') {
      const box = h('input', { id, name: s.name, type: 'checkbox', onchange: changed });
      box.checked = initial.get(s.name) === '1';
      controls.set(s.name, box);
      return h('label', { class: 'filter toggle' }, box, h('span', {}, s.label));
    }
    const input = h('input', { id, name: s.name, type: 'search', placeholder: s.label, autocomplete: 'off', oninput: changed });
    input.value = initial.get(s.name) ?? '';
    controls.set(s.name, input);
    return h('label', { class: 'filter search' }, h('span', { class: 'visually-hidden' }, s.label), input);
  });
  return {
    element: h('div', { class: 'filters', role: 'search' }, ...parts),
    value(name) {
      const c = controls.get(name);
      if (c instanceof HTMLInputElement && c.type === 'checkbox') return c.checked ? '1' : '';
      return c?.value ?? '';
    },
    options(name, values) {
      const select = controls.get(name);
      if (!(select instanceof HTMLSelectElement)) return;
      const current = select.value;
      const wanted = [...new Set([...values, ...(current === '' ? [] : [current])])].sort();
      const have = [...select.options].slice(1).map((o) => o.value);
      if (have.length === wanted.length && have.every((v, i) => v === wanted[i])) return;
      const first = select.options[0];
      replace(select, first, ...wanted.map((v) => h('option', { value: v }, v)));
      select.value = current;
    },
  };
}

/**
 * Building the page from elements, never from markup strings: every text goes through
 * textContent, so nothing the API returns is ever parsed as HTML. Styles are set through
 * classes (the Content-Security-Policy forbids inline style attributes; the CSSOM is used for
 * computed sizes only).
 */

export type Child = Node | string | number | undefined | null | false;

export interface Attrs {
  readonly [name: string]: string | number | boolean | undefined | ((event: Event) => void);
}

/** A new element: `attrs` are attributes (`class`, `href`, `data-*`...), `on*` functions are listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces the children of `el`. */
export function replace(el: Node, ...children: Child[]): void {
  while (el.firstChild !== null) el.removeChild(el.firstChild);
  append(el, children);
}

/** Sets a text only when it differs (no layout work for unchanged cells). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** A status pill: `tone` colours it. */
export function pill(text: string, tone: string, title = ''): HTMLSpanElement {
  return h('span', { class: `pill tone-${tone}`, title: title === '' ? undefined : title }, text);
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Readonly<Record<string, string | number>> = {}): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

/**
 * A time that moves: `prefix + age + suffix`, refreshed in place every second by refreshTimes
 * (a view redraws when its data changes, not every second).
 */
export function ago(since: number | undefined, now: number, format: (ms: number) => string, prefix = '', suffix = ''): HTMLSpanElement {
  const el = h('span', { class: 'ago' });
  if (since === undefined) {
    el.textContent = '-';
    return el;
  }
  el.dataset.since = String(since);
  el.dataset.prefix = prefix;
  el.dataset.suffix = suffix;
  el.textContent = `${prefix}${format(now - since)}${suffix}`;
  return el;
}

/** Refreshes every ago() under `root`; `limitMs` marks those older than their data-limit (leases) as expired. */
export function refreshTimes(root: Element, now: number, format: (ms: number) => string): void {
  for (const el of root.querySelectorAll<HTMLElement>('[data-since]')) {
    const since = Number(el.dataset.since);
    setText(el, `${el.dataset.prefix ?? ''}${format(now - since)}${el.dataset.suffix ?? ''}`);
    const limit = el.dataset.limit;
    if (limit !== undefined) el.classList.toggle('expired', now - since > Number(limit));
  }
}

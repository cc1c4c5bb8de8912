/**
 * Small charts as inline SVG: a sparkline of a series over a time window (scaled to a maximum,
 * e.g. the node's allocatable), and a bar of requested against allocatable and capacity.
 */
import { h, svg } from './dom.js';
import type { Sample } from './history.js';

export interface SparklineOptions {
  readonly width: number;
  readonly height: number;
  readonly windowMs: number;
  readonly now: number;
  /** The value at the top of the chart (at least the largest sample). */
  readonly max: number;
  readonly label: string;
}

/** The SVG path of `samples` over the window ending at `now` ('' with fewer than one sample). */
export function sparkPath(samples: readonly Sample[], o: Omit<SparklineOptions, 'label'>): string {
  if (samples.length === 0) return '';
  const top = Math.max(o.max, ...samples.map((s) => s.v), Number.EPSILON);
  const x = (t: number): number => Math.max(0, Math.min(o.width, o.width - ((o.now - t) / o.windowMs) * o.width));
  const y = (v: number): number => o.height - 1 - (v / top) * (o.height - 2);
  const points = samples.map((s) => `${x(s.t).toFixed(1)},${y(s.v).toFixed(1)}`);
  if (points.length === 1) points.unshift(`${Math.max(0, x(samples[0]?.t ?? 0) - 2).toFixed(1)},${y(samples[0]?.v ?? 0).toFixed(1)}`);
  return `M${points.join('L')}`;
}

export function sparkline(samples: readonly Sample[], o: SparklineOptions): SVGSVGElement {
  const el = svg('svg', { class: 'spark', viewBox: `0 0 ${o.width} ${o.height}`, width: o.width, height: o.height, role: 'img', 'aria-label': o.label });
  const d = sparkPath(samples, o);
  if (d === '') {
    el.appendChild(svg('line', { class: 'spark-none', x1: 0, y1: o.height - 1, x2: o.width, y2: o.height - 1 }));
    return el;
  }
  const last = samples[samples.length - 1];
  const first = samples[0];
  const area = `${d}L${o.width},${o.height}L${Math.max(0, o.width - ((o.now - (first?.t ?? o.now)) / o.windowMs) * o.width).toFixed(1)},${o.height}Z`;
  el.appendChild(svg('path', { class: 'spark-area', d: area }));
  el.appendChild(svg('path', { class: 'spark-line', d }));
  if (last !== undefined) el.appendChild(svg('title', {})).textContent = o.label;
  return el;
}

/**
 * A bar of a resource: the requested share of allocatable filled, capacity beyond allocatable
 * hatched (reserved for the system). Fractions are clamped to [0, 1].
 */
export function resourceBar(requested: number, allocatable: number | undefined, capacity: number | undefined, title: string): HTMLElement {
  const cap = capacity ?? allocatable ?? 0;
  const alloc = allocatable ?? cap;
  const bar = h('div', { class: 'bar', title, role: 'img', 'aria-label': title });
  const reserved = h('div', { class: 'bar-reserved' });
  const used = h('div', { class: requested > alloc && alloc > 0 ? 'bar-used over' : 'bar-used' });
  const share = (v: number, of: number): string => `${(of <= 0 ? 0 : Math.max(0, Math.min(1, v / of)) * 100).toFixed(1)}%`;
  reserved.style.width = share(cap - alloc, cap);
  used.style.width = share(requested, cap);
  bar.append(used, reserved);
  return bar;
}

/**
 * A virtualised list: only the rows on screen (and a few around them) exist in the DOM, so a
 * list of thousands of pods or events costs the same to draw as a screenful. Rows have one
 * fixed height (CSS --row-height); each is an element reused as the list scrolls, refilled only
 * when its item changed (items are immutable rows compared by reference).
 */
import { h } from './dom.js';
import { visibleRows } from './window.js';

export interface VirtualListOptions<T> {
  /** The scrolling element's extra class (column layout). */
  readonly className: string;
  readonly rowHeight: number;
  /** Builds the cells of a new row element (once per pooled element). */
  readonly createRow: (row: HTMLElement) => void;
  /** Fills a row element with an item's values. */
  readonly fillRow: (row: HTMLElement, item: T) => void;
  /** Called when a row is clicked or activated with Enter. */
  readonly onOpen?: (item: T) => void;
  /** Shown when there is no item. */
  readonly empty: string;
}

interface Slot<T> {
  readonly el: HTMLElement;
  item: T | undefined;
  index: number;
}

const OVERSCAN = 8;

export class VirtualList<T> {
  readonly element: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly emptyNote: HTMLElement;
  private readonly options: VirtualListOptions<T>;
  private items: readonly T[] = [];
  private readonly slots: Slot<T>[] = [];
  private frame = 0;

  constructor(options: VirtualListOptions<T>) {
    this.options = options;
    this.spacer = h('div', { class: 'vlist-spacer' });
    this.emptyNote = h('div', { class: 'vlist-empty' }, options.empty);
    this.element = h('div', { class: `vlist ${options.className}`, role: 'list' }, this.spacer, this.emptyNote);
    this.element.addEventListener('scroll', () => {
      this.schedule();
    }, { passive: true });
    this.element.addEventListener('click', (event) => {
      this.open(event.target);
    });
    this.element.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') this.open(event.target);
    });
  }

  /** The items, in display order; redrawn on the next frame. */
  setItems(items: readonly T[]): void {
    this.items = items;
    this.schedule();
  }

  get count(): number {
    return this.items.length;
  }

  /** How many row elements exist (for tests of the virtualisation). */
  get rendered(): number {
    return this.slots.filter((s) => s.item !== undefined).length;
  }

  /** Refills the visible rows on the next frame even where their item is the same (what they show beside it changed). */
  refresh(): void {
    for (const slot of this.slots) slot.item = undefined;
    this.schedule();
  }

  dispose(): void {
    if (this.frame !== 0) cancelAnimationFrame(this.frame);
  }

  private open(target: EventTarget | null): void {
    if (!(target instanceof Element)) return;
    const row = target.closest('.vrow');
    const slot = this.slots.find((s) => s.el === row);
    if (slot?.item !== undefined) this.options.onOpen?.(slot.item);
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Draws the visible rows now. */
  draw(): void {
    const { rowHeight } = this.options;
    const count = this.items.length;
    this.spacer.style.height = `${count * rowHeight}px`;
    this.emptyNote.hidden = count > 0;
    const win = visibleRows(this.element.scrollTop, this.element.clientHeight, rowHeight, count, OVERSCAN);
    const needed = win.end - win.start;
    while (this.slots.length < needed) {
      const el = h('div', { class: `vrow ${this.options.className}`, role: 'listitem', tabindex: 0 });
      this.options.createRow(el);
      this.element.appendChild(el);
      this.slots.push({ el, item: undefined, index: -1 });
    }
    this.slots.forEach((slot, i) => {
      const index = win.start + i;
      if (i >= needed) {
        slot.item = undefined;
        if (!slot.el.hidden) slot.el.hidden = true;
        return;
      }
      const item = this.items[index];
      if (item === undefined) return;
      if (slot.index !== index) {
        slot.el.style.transform = `translateY(${index * rowHeight}px)`;
        slot.index = index;
      }
      if (slot.el.hidden) slot.el.hidden = false;
      if (slot.item !== item) {
        slot.item = item;
        this.options.fillRow(slot.el, item);
      }
    });
  }
}

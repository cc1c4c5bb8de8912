/** A line saying why a list is not live (forbidden, reconnecting, loading), or nothing when it is. */
import { h } from '../dom.js';
import type { ReflectorState } from '../reflector.js';

export function stateNote(what: string, state: ReflectorState): HTMLElement | undefined {
  switch (state.kind) {
    case 'failed':
      return h('p', { class: 'note bad', role: 'alert' }, `Cannot read ${what}: ${state.error}`);
    case 'retrying':
      return h('p', { class: 'note warn' }, `The watch of ${what} dropped (${state.error}); reconnecting in ${Math.max(1, Math.round(state.inMs / 1000))} s and resuming where it stopped.`);
    case 'listing':
      return h('p', { class: 'note' }, `Loading ${what}…`);
    case 'idle':
    case 'live':
      return undefined;
  }
}

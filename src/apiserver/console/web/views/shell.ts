/**
 * The frame around the views: the brand, the navigation with live counts, the state of the
 * watches (live, reconnecting, failed), the signed-in user and the sign-out button.
 */
import { h, setText } from '../dom.js';
import type { Hub } from '../hub.js';
import { nodeHealth } from '../model.js';
import type { ViewContext } from './context.js';
import { redrawOn } from './context.js';

export interface Shell {
  readonly element: HTMLElement;
  /** Where views go. */
  readonly main: HTMLElement;
  /** Marks the navigation entry of the route shown. */
  select(section: string): void;
  dispose(): void;
}

function counts(hub: Hub): { nodes: string; pods: string; events: string } {
  let ready = 0;
  for (const n of hub.nodes.items.values()) if (nodeHealth(n).ready === 'True') ready++;
  let failing = 0;
  for (const p of hub.pods.items.values()) if (p.tone === 'bad') failing++;
  let warnings = 0;
  for (const e of hub.events.items.values()) if (e.type === 'Warning') warnings++;
  return {
    nodes: `${ready}/${hub.nodes.items.size}`,
    pods: failing > 0 ? `${hub.pods.items.size} · ${failing}!` : String(hub.pods.items.size),
    events: warnings > 0 ? `${hub.events.items.size} · ${warnings}!` : String(hub.events.items.size),
  };
}

export function createShell(ctx: ViewContext, user: string, onSignOut: () => void): Shell {
  const badge = (): HTMLElement => h('span', { class: 'nav-count' });
  const links = {
    nodes: h('a', { href: '#/nodes', class: 'nav-link', 'data-section': 'nodes' }, 'Nodes ', badge()),
    pods: h('a', { href: '#/pods', class: 'nav-link', 'data-section': 'pods' }, 'Pods ', badge()),
    events: h('a', { href: '#/events', class: 'nav-link', 'data-section': 'events' }, 'Events ', badge()),
  };
  const status = h('span', { class: 'conn', role: 'status', 'aria-live': 'polite' });
  const main = h('main', { class: 'main', id: 'main' });
  const header = h('header', { class: 'top' },
    h('a', { class: 'brand', href: '#/nodes' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'orch console'),
    h('nav', { class: 'nav' }, links.nodes, links.pods, links.events),
    h('div', { class: 'top-right' },
      status,
      h('span', { class: 'user', title: 'signed in as' }, user),
      h('button', { type: 'button', class: 'btn ghost', id: 'sign-out', onclick: onSignOut }, 'Sign out')));
  const element = h('div', { class: 'shell' }, header, main);
  const hub = ctx.hub;
  const stop = redrawOn(ctx, [hub.nodes, hub.pods, hub.events], () => {
    const c = counts(hub);
    for (const [key, text] of Object.entries(c)) {
      const count = links[key as keyof typeof links].querySelector('.nav-count');
      if (count !== null) setText(count, text);
    }
    const conn = hub.connection();
    const [cls, text, title] = conn.kind === 'live' ? ['live', 'live', 'every list is watched']
      : conn.kind === 'retrying' ? ['retrying', 'reconnecting', `${conn.error}; next try in ${Math.round(conn.inMs / 1000)} s`]
        : conn.kind === 'failed' ? ['failed', 'no access', conn.error]
          : ['connecting', 'connecting', 'listing'];
    status.className = `conn conn-${cls}`;
    setText(status, text);
    status.title = title;
  }, { minGapMs: 250 });
  return {
    element,
    main,
    select(section) {
      for (const [key, link] of Object.entries(links)) link.classList.toggle('active', key === section);
    },
    dispose: stop,
  };
}

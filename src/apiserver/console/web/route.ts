/** The console's routes, in the URL's hash: `#/nodes`, `#/nodes/<name>`, `#/pods?…`, `#/pods/<ns>/<name>`, `#/events?…`. */

export type Route =
  | { readonly view: 'nodes' }
  | { readonly view: 'node'; readonly name: string }
  | { readonly view: 'pods'; readonly query: URLSearchParams }
  | { readonly view: 'pod'; readonly namespace: string; readonly name: string }
  | { readonly view: 'events'; readonly query: URLSearchParams };

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // A malformed escape: shown as typed (the API answers that no such object exists).
    return part;
  }
}

/** The route of a location hash; anything unknown is the overview. */
export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const q = text.indexOf('?');
  const path = (q < 0 ? text : text.slice(0, q)).split('/').filter((s) => s !== '').map(decode);
  const query = new URLSearchParams(q < 0 ? '' : text.slice(q + 1));
  const [section, a, b] = path;
  if (section === 'nodes' && a !== undefined) return { view: 'node', name: a };
  if (section === 'pods' && a !== undefined && b !== undefined) return { view: 'pod', namespace: a, name: b };
  if (section === 'pods') return { view: 'pods', query };
  if (section === 'events') return { view: 'events', query };
  return { view: 'nodes' };
}

/** The navigation entry a route belongs to. */
export function sectionOf(route: Route): 'nodes' | 'pods' | 'events' {
  return route.view === 'node' ? 'nodes' : route.view === 'pod' ? 'pods' : route.view;
}

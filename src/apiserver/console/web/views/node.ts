/**
 * A node's page: its conditions with their reasons and times, taints, resources with larger
 * usage charts, lease, system information, the pods it runs and its recent events.
 */
import { ago, h, pill, refreshTimes, replace } from '../dom.js';
import { formatAge } from '../format.js';
import { timeOf } from '../kube.js';
import { nodeResources, requestsByNode } from '../model.js';
import { redrawOn, type View, type ViewContext } from './context.js';
import { leaseBadge, nodePills, resourceRow, taintText } from './node-parts.js';
import { stateNote } from './notes.js';
import { podLink } from './pods.js';

const CHART = { width: 360, height: 64 };

function definitionList(entries: readonly [string, string | Node][]): HTMLElement {
  return h('dl', { class: 'facts' }, ...entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export function nodeView(ctx: ViewContext, name: string): View {
  const hub = ctx.hub;
  const release = hub.acquireNodeData();
  const body = h('div', { class: 'detail' });
  const element = h('div', { class: 'view view-node', 'data-node': name },
    h('p', { class: 'crumbs' }, h('a', { href: '#/nodes' }, 'Cluster'), ' / node'), body);
  const draw = (): void => {
    const now = ctx.now();
    const node = hub.nodes.items.get(name);
    if (node === undefined) {
      replace(body, h('h1', {}, name), stateNote('nodes', hub.nodes.state) ?? (hub.nodes.synced ? h('p', { class: 'note warn' }, `Node ${name} does not exist (or was deleted).`) : h('p', { class: 'note' }, 'Loading…')));
      return;
    }
    const use = nodeResources(node, requestsByNode(hub.pods.items.values()).get(name));
    const pods = [...hub.pods.items.values()].filter((p) => p.node === name).sort((a, b) => a.key.localeCompare(b.key));
    const events = [...hub.events.items.values()].filter((e) => e.kind === 'Node' && e.objectName === name).sort((a, b) => b.last - a.last).slice(0, 20);
    const info = node.status?.nodeInfo ?? {};
    replace(body,
      h('header', { class: 'detail-head' }, h('h1', {}, name), h('span', { class: 'pills' }, ...nodePills(node)), leaseBadge(hub.leases.items.get(`orch-node-lease/${name}`), now)),
      h('section', { class: 'panel' }, h('h2', {}, 'Resources'),
        h('div', { class: 'res big' }, ...(['cpu', 'memory', 'pods'] as const).map((r) => resourceRow(hub, r, name, use[r], now, CHART))),
        h('p', { class: 'help' }, 'Bars: requests of the node\'s pods against allocatable; the hatched end is capacity held back for the system. Lines: usage over the last 10 minutes from the resource metrics API.'),
        hub.metrics.error === '' ? undefined : h('p', { class: 'note warn' }, `Live usage unavailable: ${hub.metrics.error}`)),
      h('section', { class: 'panel' }, h('h2', {}, 'Conditions'),
        h('table', { class: 'table' },
          h('thead', {}, h('tr', {}, ...['Type', 'Status', 'Reason', 'Message', 'Last heartbeat', 'Since'].map((t) => h('th', {}, t)))),
          h('tbody', {}, ...(node.status?.conditions ?? []).map((c) => {
            const bad = c.type === 'Ready' ? c.status !== 'True' : c.status === 'True';
            return h('tr', { 'data-condition': c.type ?? '' },
              h('td', {}, c.type ?? ''), h('td', {}, pill(c.status ?? '', c.status === 'Unknown' ? 'unknown' : bad ? 'bad' : 'ok')),
              h('td', {}, c.reason ?? ''), h('td', { class: 'wrap' }, c.message ?? ''),
              h('td', {}, ago(timeOf(c.lastHeartbeatTime), now, formatAge, '', ' ago')), h('td', {}, ago(timeOf(c.lastTransitionTime), now, formatAge)));
          })))),
      h('section', { class: 'panel two' },
        h('div', {}, h('h2', {}, 'Taints'), (node.spec?.taints ?? []).length === 0 ? h('p', { class: 'dim' }, 'none')
          : h('ul', { class: 'plain' }, ...(node.spec?.taints ?? []).map((t) => h('li', {}, h('code', {}, taintText(t)))))),
        h('div', {}, h('h2', {}, 'System'), definitionList([
          ['Addresses', (node.status?.addresses ?? []).map((a) => `${a.type ?? ''} ${a.address ?? ''}`).join(', ')],
          ['OS', [info.osImage, info.architecture].filter((x) => x !== undefined && x !== '').join(', ')], ['Kernel', info.kernelVersion ?? ''],
          ['Runtime', info.containerRuntimeVersion ?? ''], ['Agent', info.kubeletVersion ?? ''],
          ['Age', ago(timeOf(node.metadata?.creationTimestamp), now, formatAge)],
        ]))),
      h('section', { class: 'panel' }, h('h2', {}, `Pods (${pods.length})`),
        pods.length === 0 ? h('p', { class: 'dim' }, 'No pod is bound to this node.')
          : h('table', { class: 'table' },
            h('thead', {}, h('tr', {}, ...['Pod', 'Ready', 'Status', 'Restarts', 'Age'].map((t) => h('th', {}, t)))),
            h('tbody', {}, ...pods.slice(0, 200).map((p) => h('tr', { 'data-pod': p.key },
              h('td', {}, podLink(p)), h('td', {}, `${p.ready}/${p.total}`), h('td', {}, pill(p.status, p.tone)),
              h('td', {}, String(p.restarts)), h('td', {}, ago(p.created, now, formatAge))))))),
      h('section', { class: 'panel' }, h('h2', {}, 'Events'),
        events.length === 0 ? h('p', { class: 'dim' }, 'No recent event about this node.')
          : h('ul', { class: 'events-mini' }, ...events.map((e) => h('li', { class: `ev-${e.type.toLowerCase()}` },
            h('span', { class: 'dim' }, ago(e.last, now, formatAge, '', ' ago')), ' ', h('strong', {}, e.reason), ' ', e.note)))));
  };
  const stop = redrawOn(ctx, [hub.nodes, hub.pods, hub.events, hub.leases, { subscribe: (l) => hub.onMetrics(l) }], draw, {
    minGapMs: 500,
    tick: () => {
      refreshTimes(element, ctx.now(), formatAge);
    },
  });
  return {
    element, title: `Node ${name}`,
    dispose() {
      stop();
      release();
    },
  };
}

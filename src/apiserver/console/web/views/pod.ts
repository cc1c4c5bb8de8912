/**
 * A pod's page: its status, each container's state (running since, waiting and why, terminated
 * with its exit code, the last termination), conditions, its events as they come, and the log
 * tail of one container followed while the page is open.
 */
import { ApiError } from '../api.js';
import { ago, h, pill, refreshTimes, replace } from '../dom.js';
import { clockTime, formatAge } from '../format.js';
import { keyOf, timeOf, type ContainerState, type ContainerStatus, type KubeObject, type Pod } from '../kube.js';
import { LogTail, type LogLine, type LogState } from '../log-tail.js';
import { podRow } from '../model.js';
import { backoffMs } from '../reflector.js';
import { redrawOn, type View, type ViewContext } from './context.js';

const MAX_LOG_LINES = 2000;

function stateText(state: ContainerState | undefined, now: number): { text: string; tone: string; detail: string } {
  if (state?.running !== undefined) return { text: 'Running', tone: 'ok', detail: `since ${formatAge(now - (timeOf(state.running.startedAt) ?? now))}` };
  if (state?.terminated !== undefined) {
    const t = state.terminated;
    const reason = t.reason ?? (t.signal !== undefined && t.signal !== 0 ? `Signal ${t.signal}` : 'Terminated');
    return { text: reason, tone: t.exitCode === 0 ? 'ok' : 'bad', detail: `exit code ${t.exitCode ?? '?'}${t.message === undefined ? '' : `: ${t.message}`}` };
  }
  if (state?.waiting !== undefined) {
    const reason = state.waiting.reason ?? 'Waiting';
    return { text: reason, tone: /BackOff|Err|Invalid/.test(reason) ? 'bad' : 'warn', detail: state.waiting.message ?? '' };
  }
  return { text: 'Pending', tone: 'warn', detail: 'no status reported yet' };
}

function containerCard(name: string, image: string, init: boolean, s: ContainerStatus | undefined, now: number): HTMLElement {
  const state = stateText(s?.state, now);
  const last = s?.lastState?.terminated === undefined ? undefined : stateText(s.lastState, now);
  return h('article', { class: `card container-card tone-${state.tone}`, 'data-container': name },
    h('header', { class: 'card-head' }, h('span', { class: 'card-title' }, name, init ? h('span', { class: 'dim' }, ' (init)') : undefined),
      h('span', { class: 'pills' }, pill(state.text, state.tone), s?.ready === true ? pill('ready', 'ok') : pill('not ready', init ? 'unknown' : 'warn'))),
    h('p', { class: 'mono dim' }, image),
    state.detail === '' ? undefined : h('p', {}, state.detail),
    h('p', { class: 'dim' }, `restarts ${s?.restartCount ?? 0}`, last === undefined ? '' : ` · last ${last.text} (${last.detail})`));
}

export function podView(ctx: ViewContext, namespace: string, name: string): View {
  const hub = ctx.hub;
  const key = `${namespace}/${name}`;
  let pod: Pod | undefined;
  let missing = '';
  const body = h('div', { class: 'pod-body' });
  const eventsList = h('ul', { class: 'events-mini', id: 'pod-events' });
  const logLines = h('div', { class: 'log', id: 'log', role: 'log', 'aria-live': 'off', tabindex: 0 });
  const logState = h('span', { class: 'log-state' });
  const logTabs = h('div', { class: 'tabs', role: 'tablist' });
  const element = h('div', { class: 'view view-pod', 'data-pod': key },
    h('p', { class: 'crumbs' }, h('a', { href: '#/pods' }, 'Pods'), ` / ${namespace}`),
    body,
    h('section', { class: 'panel' }, h('h2', {}, 'Log ', logState), logTabs, logLines),
    h('section', { class: 'panel' }, h('h2', {}, 'Events'), eventsList));

  let tail: LogTail | undefined;
  let container = '';
  const showLines = (lines: readonly LogLine[]): void => {
    const stick = logLines.scrollTop + logLines.clientHeight >= logLines.scrollHeight - 4;
    for (const l of lines) {
      const time = timeOf(l.time);
      logLines.appendChild(h('div', { class: 'log-line' }, h('span', { class: 'log-time' }, time === undefined ? '' : clockTime(time)), l.text));
    }
    while (logLines.childElementCount > MAX_LOG_LINES) logLines.firstElementChild?.remove();
    if (stick) logLines.scrollTop = logLines.scrollHeight;
  };
  const showState = (s: LogState): void => {
    logState.className = `log-state ${s.kind}`;
    logState.textContent = s.kind === 'following' ? 'following' : s.kind === 'connecting' ? 'connecting…' : `waiting: ${s.why}`;
  };
  const follow = (c: string): void => {
    if (c === container) return;
    container = c;
    tail?.stop();
    replace(logLines);
    tail = new LogTail({ api: ctx.api, namespace, pod: name, container: c, timers: ctx.timers, onLines: showLines, onState: showState });
    tail.start();
    for (const b of logTabs.querySelectorAll('button')) b.setAttribute('aria-selected', String(b.dataset.container === c));
  };

  const draw = (): void => {
    const now = ctx.now();
    if (pod === undefined) {
      replace(body, h('h1', {}, name), h('p', { class: missing === '' ? 'note' : 'note warn', role: missing === '' ? undefined : 'alert' }, missing === '' ? 'Loading…' : missing));
      return;
    }
    const row = podRow(pod);
    const spec = pod.spec ?? {};
    const status = pod.status ?? {};
    const statusOf = (list: readonly ContainerStatus[] | undefined, n: string): ContainerStatus | undefined => list?.find((s) => s.name === n);
    replace(body,
      h('header', { class: 'detail-head' }, h('h1', {}, name), h('span', { class: 'pills' }, pill(row.status, row.tone)),
        h('span', { class: 'dim' }, `${row.ready}/${row.total} ready · ${row.restarts} restarts`)),
      h('dl', { class: 'facts inline' },
        h('dt', {}, 'Namespace'), h('dd', {}, namespace),
        h('dt', {}, 'Node'), h('dd', {}, spec.nodeName === undefined ? '<unscheduled>' : h('a', { href: `#/nodes/${encodeURIComponent(spec.nodeName)}` }, spec.nodeName)),
        h('dt', {}, 'Pod IP'), h('dd', {}, status.podIP ?? '-'),
        h('dt', {}, 'QoS'), h('dd', {}, status.qosClass ?? '-'),
        h('dt', {}, 'Age'), h('dd', {}, ago(row.created, now, formatAge)),
        status.message === undefined ? undefined : h('dt', {}, 'Message'), status.message === undefined ? undefined : h('dd', {}, status.message)),
      h('section', { class: 'cards containers' },
        ...(spec.initContainers ?? []).map((c) => containerCard(c.name ?? '', c.image ?? '', true, statusOf(status.initContainerStatuses, c.name ?? ''), now)),
        ...(spec.containers ?? []).map((c) => containerCard(c.name ?? '', c.image ?? '', false, statusOf(status.containerStatuses, c.name ?? ''), now))),
      h('section', { class: 'panel' }, h('h2', {}, 'Conditions'),
        h('div', { class: 'pills' }, ...(status.conditions ?? []).map((c) => pill(c.type ?? '', c.status === 'True' ? 'ok' : c.status === 'False' ? 'warn' : 'unknown', [c.reason, c.message].filter((x) => x !== undefined).join(': '))))));
    const names = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c) => c.name ?? '');
    if (logTabs.childElementCount !== names.length) {
      replace(logTabs, ...names.map((n) => h('button', { type: 'button', role: 'tab', class: 'tab', 'data-container': n, onclick: () => { follow(n); } }, n)));
    }
    if (container === '') follow(spec.containers?.[0]?.name ?? names[0] ?? '');
    for (const b of logTabs.querySelectorAll('button')) b.setAttribute('aria-selected', String(b.dataset.container === container));
  };
  const drawEvents = (): void => {
    const now = ctx.now();
    const events = [...hub.events.items.values()].filter((e) => e.kind === 'Pod' && e.objectNamespace === namespace && e.objectName === name).sort((a, b) => b.last - a.last);
    replace(eventsList, ...(events.length === 0 ? [h('li', { class: 'dim' }, 'No event about this pod.')] : events.map((e) => h('li', { class: `ev-${e.type.toLowerCase()}` },
      h('span', { class: 'dim' }, ago(e.last, now, formatAge, '', ' ago')), ' ', h('strong', {}, e.reason), e.count > 1 ? h('span', { class: 'dim' }, ` ×${e.count}`) : undefined, ' ', e.note))));
  };

  // Redrawn when this pod changes only (the pods' watch carries every pod of the cluster).
  const podListeners = new Set<() => void>();
  const podChanged = (): void => {
    for (const l of [...podListeners]) l();
  };
  const unObjects = hub.pods.subscribeObjects((type, object: KubeObject) => {
    if (keyOf(object) !== key) return;
    if (type === 'DELETED') {
      pod = undefined;
      missing = `Pod ${key} was deleted.`;
    } else {
      pod = object;
    }
    podChanged();
  });
  // The full object (the pods' watch keeps rows only). A read that did not reach the server
  // (the API server restarting, a browser's ERR_NETWORK_CHANGED) is tried again, 1 s doubling
  // to 8 s, until the page closes; an answer of the server is final.
  const abort = new AbortController();
  let retry: unknown;
  const read = (attempt: number): void => {
    ctx.api.get<Pod>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`, abort.signal).then((p) => {
      // A watch event newer than this read may have come first.
      if (pod === undefined || Number(p.metadata?.resourceVersion ?? 0) >= Number(pod.metadata?.resourceVersion ?? 0)) pod = p;
      podChanged();
    }, (err: unknown) => {
      if (abort.signal.aborted) return;
      const unreachable = err instanceof ApiError && err.status === 0;
      const pauseMs = backoffMs(attempt, 8000);
      missing = err instanceof ApiError && err.status === 404
        ? `Pod ${key} does not exist.`
        : `Cannot read pod ${key}: ${err instanceof Error ? err.message : String(err)}${unreachable ? `; trying again in ${pauseMs / 1000} s` : ''}`;
      podChanged();
      if (unreachable) retry = ctx.timers.setTimeout(() => { read(attempt + 1); }, pauseMs);
    });
  };
  read(1);
  const podSource = {
    subscribe: (l: () => void): (() => void) => {
      podListeners.add(l);
      return () => podListeners.delete(l);
    },
  };
  const stopPod = redrawOn(ctx, [podSource], draw, {
    minGapMs: 50,
    tick: () => {
      refreshTimes(element, ctx.now(), formatAge);
    },
  });
  const stopEvents = redrawOn(ctx, [hub.events], drawEvents, { minGapMs: 200 });
  return {
    element, title: `Pod ${name}`,
    dispose() {
      abort.abort();
      ctx.timers.clearTimeout(retry);
      unObjects();
      stopPod();
      stopEvents();
      tail?.stop();
    },
  };
}

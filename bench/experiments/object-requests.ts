/**
 * API requests per minute that ConfigMap volumes cost, per configMapAndSecretChangeDetectionStrategy:
 * 110 pods, each with two configMap volumes, synced once a minute each (syncFrequency, spread over
 * the minute as pods started at different times), through the agent's real object manager and
 * volume manager (files written under a temporary root; configMap volumes need no mount, so no
 * root either). The API server is the FakeRestClient, whose watches the bench ends after their
 * timeoutSeconds as the API server does, on a FakeClock: 30 simulated minutes take seconds.
 * Two layouts: every pod naming the same two ConfigMaps, and each pod its own two (220).
 *
 * Halfway it also changes one ConfigMap, right after the first pod's sync, and reports how long
 * until every pod naming it holds the new value in its volume (the bound is one sync period, plus
 * the TTL under Cache).
 *
 *   node dist/bench/experiments/object-requests.js [--pods 110] [--minutes 30]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FakeClock } from '../../src/api/fake-clock.js';
import type { NodePod } from '../../src/api/pod/index.js';
import { FakeLogger } from '../../src/agent/logging/testing.js';
import type { RestCallOptions, WatchEvent, WatchHandle } from '../../src/agent/orchclient/index.js';
import { FakeRestClient } from '../../src/agent/orchclient/testing.js';
import { createObjectManager, createVolumeManager, type ChangeDetectionStrategy } from '../../src/agent/volumes/index.js';
import { isMain } from '../table.js';

const SYNC_MS = 60_000;
const WARM_UP_MINUTES = 2;

/** The FakeRestClient with the API server's end of a watch: after its timeoutSeconds. */
class TimingOutRest extends FakeRestClient {
  constructor(private readonly clock: FakeClock) {
    super({ now: () => clock.now() });
  }

  override watch<T>(p: string, onEvent: (event: WatchEvent<T>) => void, options?: RestCallOptions): WatchHandle {
    const handle = super.watch(p, onEvent, options);
    const watch = this.watches.at(-1);
    const seconds = Number(options?.query?.timeoutSeconds ?? 0);
    if (watch !== undefined && seconds > 0) this.clock.setTimer(seconds * 1000, () => { watch.finish({ reason: 'closed' }); });
    return handle;
  }
}

export interface RequestFigures {
  readonly strategy: ChangeDetectionStrategy;
  readonly layout: 'shared' | 'distinct';
  readonly perMinute: { readonly get: number; readonly list: number; readonly watch: number; readonly total: number };
  readonly openWatches: number;
  /** From the ConfigMap's update until the volume of every pod naming it shows it. */
  readonly updateSeenAfterMs: number;
}

async function measure(strategy: ChangeDetectionStrategy, layout: 'shared' | 'distinct', pods: number, minutes: number): Promise<RequestFigures> {
  const clock = new FakeClock();
  const rest = new TimingOutRest(clock);
  const rootDir = await mkdtemp(path.join(os.tmpdir(), 'object-requests-'));
  const logger = new FakeLogger();
  const names = (i: number): [string, string] => (layout === 'shared' ? ['common-a', 'common-b'] : [`cm-${i}-a`, `cm-${i}-b`]);
  for (let i = 0; i < (layout === 'shared' ? 1 : pods); i++) {
    for (const name of names(i)) rest.put(`/api/v1/namespaces/default/configmaps/${name}`, { metadata: { name, namespace: 'default' }, data: { value: 'v1' } });
  }
  const objects = createObjectManager({ rest, strategy, clock, logger });
  const volumes = createVolumeManager({ rootDir, logger, clock, objects, nodeCapacity: () => ({ cpuMilli: 2000, memoryBytes: 2 ** 32 }) });
  const podList: NodePod[] = Array.from({ length: pods }, (_, i) => ({
    metadata: { uid: `uid-${i}`, name: `pod-${i}`, namespace: 'default' },
    spec: { containers: [{ name: 'c' }], volumes: names(i).map((name, j) => ({ name: `v${j}`, configMap: { name } })) },
  }));
  try {
    for (const pod of podList) objects.registerPod(pod);
    const step = SYNC_MS / pods;
    let countedFrom = 0;
    let updatedAt = 0;
    const [changed] = names(0);
    const naming = podList.filter((_, i) => names(i).includes(changed));
    const seen = new Map<string, number>();
    const fileOf = (pod: NodePod): string => path.join(rootDir, 'pods', pod.metadata.uid, 'volumes', 'orch.io~configmap', 'v0', 'value');
    const halfway = WARM_UP_MINUTES + Math.floor(minutes / 2);
    for (let minute = 0; minute < WARM_UP_MINUTES + minutes; minute++) {
      if (minute === WARM_UP_MINUTES) countedFrom = rest.calls.length;
      for (const [i, pod] of podList.entries()) {
        await clock.advance(step);
        await volumes.preparePodVolumes(pod);
        if (updatedAt > 0 && naming.includes(pod) && !seen.has(pod.metadata.uid) && (await readFile(fileOf(pod), 'utf8')) === 'v2') {
          seen.set(pod.metadata.uid, clock.now() - updatedAt);
        }
        if (minute === halfway && i === 0) {
          rest.put(`/api/v1/namespaces/default/configmaps/${changed}`, { metadata: { name: changed, namespace: 'default' }, data: { value: 'v2' } });
          updatedAt = clock.now();
        }
      }
    }
    const updateSeenAfterMs = seen.size === naming.length ? Math.max(...seen.values()) : Number.NaN;
    const counted = rest.calls.slice(countedFrom);
    const rate = (verb: string): number => counted.filter((c) => c.verb === verb).length / minutes;
    const perMinute = { get: rate('get'), list: rate('list'), watch: rate('watch'), total: counted.length / minutes };
    return { strategy, layout, perMinute, openWatches: rest.watching, updateSeenAfterMs };
  } finally {
    await objects.stop();
    await rm(rootDir, { recursive: true, force: true });
  }
}

export async function objectRequests(pods: number, minutes: number): Promise<RequestFigures[]> {
  const out: RequestFigures[] = [];
  for (const layout of ['shared', 'distinct'] as const) {
    for (const strategy of ['Get', 'Cache', 'Watch'] as const) out.push(await measure(strategy, layout, pods, minutes));
  }
  return out;
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { pods: { type: 'string', default: '110' }, minutes: { type: 'string', default: '30' } } });
  const pods = Number(values.pods);
  const minutes = Number(values.minutes);
  const figures = await objectRequests(pods, minutes);
  const f1 = (n: number): string => n.toFixed(1);
  process.stdout.write(`${pods} pods x 2 ConfigMap volumes, each pod synced once a minute; ${minutes} minutes after a ${WARM_UP_MINUTES}-minute warm-up\n`);
  process.stdout.write('| layout | strategy | requests/min | GET/min | LIST/min | WATCH/min | open watches | update in every volume after |\n|---|---|---|---|---|---|---|---|\n');
  for (const r of figures) {
    process.stdout.write(`| ${r.layout} | ${r.strategy} | ${f1(r.perMinute.total)} | ${f1(r.perMinute.get)} | ${f1(r.perMinute.list)} | ${f1(r.perMinute.watch)} | ${r.openWatches} | ${(r.updateSeenAfterMs / 1000).toFixed(0)} s |\n`);
  }
}

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { object, objectMeta, str } from '../schema/index.js';
import { parseFieldSelector, parseLabelSelector } from '../selectors/index.js';
import { openSqliteStore, type ManagedStore, type StoredObject, type WatchEvent } from '../storage/index.js';
import { ResourceRegistry, type ListRequest, type ResourceDefinition } from '../registry/index.js';
import { presentShared, SelectionFilter, sharedMatcher, watchIndexFor } from './selection.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const def: ResourceDefinition = {
  group: '', version: 'v1', kind: 'Pod', listKind: 'PodList', plural: 'pods', singular: 'pod', shortNames: [], categories: [],
  namespaced: true, verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'], storage: 'pods',
  schema: object({ kind: str(), apiVersion: str(), metadata: objectMeta }),
  statusSubresource: true, fieldLabels: ['spec.nodeName', 'status.phase'],
  fields: (o) => ({ 'spec.nodeName': text(rec(o.spec).nodeName), 'status.phase': text(rec(o.status).phase) }),
  columns: [], nameColumn: true, nameRule: 'subdomain', allowCreateOnUpdate: false, returnDeletedObject: true,
  strategy: { validateCreate: () => undefined, validateUpdate: () => undefined },
};

/** A small deterministic PRNG (mulberry32), so that a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NODES = ['a', 'b', 'c', ''];
const APPS = ['web', 'db', undefined];
const PHASES = ['Pending', 'Running'];

function request(field: string, label: string): ListRequest {
  return { namespace: '', labelSelector: parseLabelSelector(label), fieldSelector: parseFieldSelector(field, def.fieldLabels, 'pods') };
}

const SELECTORS: readonly ListRequest[] = [
  request('spec.nodeName=a', ''),
  request('spec.nodeName=', ''),
  request('spec.nodeName=b,status.phase=Running', ''),
  request('status.phase=Pending', 'app=web'),
  request('', 'app in (db)'),
  request('metadata.name=p3', ''),
  request('spec.nodeName!=a', ''),
];

interface Watcher {
  readonly frames: string[];
  close(): Promise<void>;
}

void describe('selector watches through a store index', () => {
  let dir: string;
  let store: ManagedStore;
  let registry: ResourceRegistry;
  before(async () => {
    dir = mkdtempSync(join(syncedTmpdir(), 'orch-watch-index-'));
    store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
    registry = new ResourceRegistry({ def, store });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function watch(req: ListRequest, indexed: boolean, from: string, seed: readonly StoredObject[]): Promise<Watcher> {
    const matches = sharedMatcher(registry, req);
    const filter = new SelectionFilter(matches);
    for (const o of seed) {
      const wire = presentShared(registry, o);
      if (matches(wire)) filter.seed(wire);
    }
    const frames: string[] = [];
    const index = indexed ? watchIndexFor(registry, req) : undefined;
    const w = await store.watch('/pods/', {
      resourceVersion: from,
      index,
      onEvent: (event: WatchEvent) => {
        if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
        const wire = presentShared(registry, event.object);
        const previous = event.previous;
        const type = filter.next(event.type, wire, previous === undefined ? undefined : () => presentShared(registry, previous()));
        if (type !== undefined) frames.push(`${type} ${text(rec(wire.metadata).name)} ${text(rec(wire.metadata).resourceVersion)}`);
      },
    });
    return { frames, close: () => w.close() };
  }

  function pod(name: string, random: () => number): StoredObject {
    const app = APPS[Math.floor(random() * APPS.length)];
    return {
      metadata: { name, namespace: random() < 0.8 ? 'ns1' : 'ns2', ...(app === undefined ? {} : { labels: { app } }) },
      spec: { nodeName: NODES[Math.floor(random() * NODES.length)] },
      status: { phase: PHASES[Math.floor(random() * PHASES.length)] },
    };
  }

  void it('chooses spec.nodeName first, another exact field, then an exact label, and no index for inequalities', () => {
    assert.equal(watchIndexFor(registry, request('status.phase=Running,spec.nodeName=x', ''))?.name, '/pods field spec.nodeName');
    assert.equal(watchIndexFor(registry, request('status.phase=Running', 'app=web'))?.value, 'Running');
    assert.equal(watchIndexFor(registry, request('', 'app=web'))?.name, '/pods label app');
    assert.equal(watchIndexFor(registry, request('spec.nodeName!=a', 'app!=web')), undefined);
    assert.equal(watchIndexFor(registry, request('metadata.namespace=ns1', '')), undefined);
  });

  for (const seed of [1, 2, 3]) {
    void it(`delivers the same frames unseeded through the index as the seeded unindexed path over random changes (seed ${seed})`, async () => {
      const random = prng(seed);
      const live = new Map<string, string>();
      const keyOf = (o: StoredObject): string => `/pods/${text(rec(o.metadata).namespace)}/${text(rec(o.metadata).name)}`;
      for (let i = 0; i < 10; i++) {
        const o = pod(`p${i}`, random);
        await store.create(keyOf(o), o);
        live.set(`p${i}`, keyOf(o));
      }
      const start = await store.list('/pods/');
      // The indexed watch is not seeded, as a watch resumed from a resourceVersion is not: each
      // change's previous state tells whether its object matched before.
      const pairs = await Promise.all(SELECTORS.map(async (req) => [await watch(req, true, start.resourceVersion, []), await watch(req, false, start.resourceVersion, start.items)] as const));
      for (let step = 0; step < 300; step++) {
        const name = `p${Math.floor(random() * 14)}`;
        const key = live.get(name);
        const roll = random();
        if (key === undefined) {
          const o = pod(name, random);
          await store.create(keyOf(o), o);
          live.set(name, keyOf(o));
        } else if (roll < 0.15) {
          await store.delete(key);
          live.delete(name);
        } else {
          const next = pod(name, random);
          await store.update(key, {}, (current) => ({ ...current, spec: next.spec, status: next.status, metadata: { ...rec(current.metadata), labels: rec(next.metadata).labels } }));
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
      for (const [i, [indexed, plain]] of pairs.entries()) {
        assert.ok(plain.frames.length > 0, `selector ${i} saw no frame: the comparison would prove nothing`);
        assert.deepEqual(indexed.frames, plain.frames, `selector ${i}`);
        await indexed.close();
        await plain.close();
      }
      for (const key of live.values()) await store.delete(key);
    });
  }

  void it('computes the index value once per change, not once per watcher', async () => {
    let calls = 0;
    const watches = await Promise.all(['x', 'y', 'z', 'w'].map((value) => store.watch('/pods/', {
      onEvent: () => undefined,
      index: { name: 'counted', value, of: (o) => { calls += 1; return text(rec(o.spec).nodeName); } },
    })));
    await store.create('/pods/ns1/counted', { metadata: { name: 'counted', namespace: 'ns1' }, spec: { nodeName: 'x' } });
    assert.equal(calls, 1);
    await store.update('/pods/ns1/counted', {}, (o) => ({ ...o, spec: { nodeName: 'y' } }));
    assert.equal(calls, 3, 'an update evaluates the new and the previous object');
    await store.delete('/pods/ns1/counted');
    for (const w of watches) await w.close();
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../status/index.js';
import { FieldManager, MAX_UPDATE_MANAGERS } from './field-manager.js';
import { LAST_APPLIED_ANNOTATION } from './last-applied.js';
import { managerFromUserAgent, resolveManager } from './manager-name.js';
import { testSchema } from './testing.js';
import type { JsonMap } from './typed.js';

const fm = new FieldManager({ schema: testSchema, apiVersion: 'v1', kind: 'Thing', statusSubresource: true });
const at = (s: number): Date => new Date(Date.UTC(2024, 4, 1, 10, 0, s));
const thing = (data: Record<string, string>, extra: JsonMap = {}): JsonMap => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', namespace: 'ns', uid: 'u1' }, data, ...extra });
const entries = (o: JsonMap): Record<string, unknown>[] => ((o.metadata as JsonMap).managedFields ?? []) as Record<string, unknown>[];
const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const summary = (o: JsonMap): string[] => entries(o).map((e) => `${text(e.manager)} ${text(e.operation)}${e.subresource === undefined ? '' : ` ${text(e.subresource)}`} ${JSON.stringify(e.fieldsV1)}`);

/** A create by `manager` (the registry's create: metadata set, then the field manager). */
function created(object: JsonMap, manager: string, s = 0): JsonMap {
  const o = structuredClone(object);
  fm.update(undefined, o, manager, '', at(s));
  return o;
}

function updated(live: JsonMap, next: JsonMap, manager: string, s: number, subresource = ''): JsonMap {
  const o = structuredClone(next);
  if ((o.metadata as JsonMap).managedFields === undefined && (live.metadata as JsonMap).managedFields !== undefined) (o.metadata as JsonMap).managedFields = structuredClone((live.metadata as JsonMap).managedFields);
  fm.update(live, o, manager, subresource, at(s));
  return o;
}

function applied(live: JsonMap | undefined, config: JsonMap, manager: string, s: number, force = false): JsonMap {
  return fm.apply(live, config, { manager, force, subresource: '', now: at(s), raw: config });
}

void describe('managedFields of updates', () => {
  void it('records a create as an Update entry in upstream\'s format, metadata that nobody owns left out', () => {
    const o = created(thing({ a: '1' }, { metadata: { name: 'x', namespace: 'ns', uid: 'u1', creationTimestamp: '2024-05-01T10:00:00Z', labels: { l: '1' } } }), 'kubectl-create');
    assert.deepEqual(entries(o), [{
      manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2024-05-01T10:00:00Z', fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
    }]);
  });
  void it('moves a changed field to its new manager, keeps times of managers that changed nothing, sorts as upstream', () => {
    let live = created(thing({ a: '1', b: '1' }), 'creator', 0);
    live = updated(live, thing({ a: '2', b: '1' }), 'editor', 5);
    assert.deepEqual(summary(live), ['creator Update {"f:data":{".":{},"f:b":{}}}', 'editor Update {"f:data":{"f:a":{}}}']);
    const same = updated(live, thing({ a: '2', b: '1' }), 'editor', 9);
    assert.deepEqual(entries(same), entries(live), 'a write that changes nothing leaves managedFields as they were');
    const removed = updated(live, thing({ b: '1' }), 'remover', 10);
    assert.deepEqual(summary(removed), ['creator Update {"f:data":{".":{},"f:b":{}}}'], 'a removed field leaves its owner; removing owns nothing');
  });
  void it('tracks status writes apart, and never gives status to writes of the object itself', () => {
    let live = created(thing({ a: '1' }, { status: { phase: 'Pending' } }), 'creator', 0);
    assert.deepEqual(summary(live), ['creator Update {"f:data":{".":{},"f:a":{}}}']);
    live = updated(live, { ...live, status: { phase: 'Running' } }, 'nodeagent', 3, 'status');
    assert.deepEqual(summary(live), ['creator Update {"f:data":{".":{},"f:a":{}}}', 'nodeagent Update status {"f:status":{"f:phase":{}}}']);
  });
  void it('takes managedFields a client writes; [] and [{}] clear them; a subresource cannot rewrite them', () => {
    const live = created(thing({ a: '1' }), 'creator', 0);
    const rewritten = thing({ a: '1' }, { metadata: { name: 'x', namespace: 'ns', uid: 'u1', managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }] } });
    assert.deepEqual(summary(updated(live, rewritten, 'migrator', 4)), ['kubectl Apply {"f:data":{"f:a":{}}}']);
    for (const reset of [[], [{}]]) {
      const cleared = updated(live, thing({ a: '1' }, { metadata: { name: 'x', namespace: 'ns', uid: 'u1', managedFields: reset } }), 'any', 5);
      assert.equal((cleared.metadata as JsonMap).managedFields, undefined);
      // Untracked now: later updates do not start tracking again (until an apply).
      assert.equal((updated(cleared, thing({ a: '9' }), 'later', 6).metadata as JsonMap).managedFields, undefined);
    }
    const viaStatus = updated(live, { ...rewritten, status: { phase: 'x' } }, 'sub', 7, 'status');
    assert.deepEqual(summary(viaStatus).map((s) => s.split(' ')[0]), ['creator', 'sub']);
    const garbage = updated(live, thing({ a: '2' }, { metadata: { name: 'x', namespace: 'ns', uid: 'u1', managedFields: [{ manager: 'm', operation: 'Frob' }] } }), 'editor', 8);
    assert.deepEqual(summary(garbage).map((s) => s.split(' ')[0]), ['creator', 'editor'], 'unreadable managedFields are replaced by the live ones');
  });
  void it(`merges the oldest of more than ${MAX_UPDATE_MANAGERS} Update managers into ancient-changes`, () => {
    let live = created(thing({}), 'm00', 0);
    for (let i = 1; i <= MAX_UPDATE_MANAGERS + 1; i++) live = updated(live, thing({ ...((live.data ?? {}) as Record<string, string>), [`k${i}`]: 'v' }), `m${String(i).padStart(2, '0')}`, i);
    const managers = entries(live).map((e) => String(e.manager));
    assert.equal(managers.length, MAX_UPDATE_MANAGERS);
    assert.ok(managers.includes('ancient-changes'));
    assert.ok(!managers.includes('m01') && !managers.includes('m02'));
  });
});

void describe('managedFields of applies', () => {
  void it('creates with an Apply entry without "." nodes, and answers 409 with upstream\'s causes on a conflict', () => {
    const live = applied(undefined, thing({ a: '1' }), 'kubectl', 0);
    assert.deepEqual(summary(live), ['kubectl Apply {"f:data":{"f:a":{}}}']);
    assert.equal('status' in live, false, 'nothing of the zero object is left');
    let err: unknown;
    try {
      applied(live, thing({ a: '2', b: '2' }), 'other', 1);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof StatusError);
    assert.equal(err.httpCode, 409);
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl": .data.a');
    assert.deepEqual(err.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.data.a' }]);
    const forced = applied(live, thing({ a: '2' }), 'other', 2, true);
    assert.deepEqual(forced.data, { a: '2' });
    assert.deepEqual(summary(forced), ['other Apply {"f:data":{"f:a":{}}}'], 'kubectl lost its only field');
  });
  void it('names Update managers with their version and lists several conflicts by manager', () => {
    let live = created(thing({ a: '1', b: '1' }), 'kubectl-client-side-apply', 0);
    live = updated(live, thing({ a: '1', b: '1', c: '1' }), 'editor', 1);
    try {
      applied(live, thing({ a: '2', b: '2', c: '2' }), 'mine', 2);
      assert.fail('a conflict was expected');
    } catch (err) {
      assert.ok(err instanceof StatusError);
      assert.equal(err.message, 'Apply failed with 3 conflicts: conflicts with "editor" using v1:\n- .data.c\nconflicts with "kubectl-client-side-apply" using v1:\n- .data.a\n- .data.b');
    }
  });
  void it('gives an untracked object\'s fields to before-first-apply', () => {
    const untracked = thing({ a: '1' });
    assert.throws(() => applied(untracked, thing({ a: '2' }), 'kubectl-x', 1), /conflict with "before-first-apply" using v1: \.data\.a/);
    const shared = applied(untracked, thing({ a: '1' }), 'kubectl-x', 1);
    assert.deepEqual(summary(shared).map((s) => s.split(' ')[0]), ['kubectl-x', 'before-first-apply']);
  });
  void it('refuses configurations with managedFields (400)', () => {
    assert.throws(() => applied(undefined, thing({}, { metadata: { name: 'x', managedFields: [] } }), 'm', 0), (e: unknown) => e instanceof StatusError && e.httpCode === 400 && e.message === 'metadata.managedFields must be nil');
  });
  void it('kubectl upgrades client-side apply: fields the last-applied annotation holds are taken without force, and it is rewritten', () => {
    const lastApplied = JSON.stringify({ apiVersion: 'v1', data: { a: '1', b: '1' }, kind: 'Thing', metadata: { annotations: {}, name: 'x', namespace: 'ns' } });
    const csa = created(thing({ a: '1', b: '1' }, { metadata: { name: 'x', namespace: 'ns', uid: 'u1', annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } } }), 'kubectl-client-side-apply');
    const config = thing({ a: '2' }, { metadata: { name: 'x', namespace: 'ns' } });
    assert.throws(() => applied(csa, config, 'someone-else', 1), /conflict with "kubectl-client-side-apply"/);
    const upgraded = applied(csa, config, 'kubectl', 1);
    assert.deepEqual(upgraded.data, { a: '2', b: '1' });
    assert.equal(((upgraded.metadata as JsonMap).annotations as JsonMap)[LAST_APPLIED_ANNOTATION], '{"apiVersion":"v1","data":{"a":"2"},"kind":"Thing","metadata":{"name":"x","namespace":"ns"}}');
    // A field changed since client-side apply set it is not covered by the annotation.
    const edited = updated(csa, { ...csa, data: { a: 'edited', b: '1' } }, 'editor', 2);
    assert.throws(() => applied(edited, config, 'kubectl', 3), /conflict with "editor" using v1: \.data\.a/);
  });
});

void describe('manager names', () => {
  void it('takes the User-Agent up to its first slash, printable characters only, at most 128 bytes', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.30.13 (linux/amd64) kubernetes/6d58ef1'), 'kubectl');
    assert.equal(managerFromUserAgent('nodeagent'), 'nodeagent');
    assert.equal(managerFromUserAgent('a\tb\u0000c/x'), 'abc');
    assert.equal(managerFromUserAgent('x'.repeat(200)).length, 128);
    assert.equal(managerFromUserAgent(undefined), '');
  });
  void it('prefers fieldManager, requires it for applies and refuses bad ones with 422', () => {
    assert.equal(resolveManager('mine', 'kubectl/v1', { apply: false, kind: 'PatchOptions' }), 'mine');
    assert.equal(resolveManager(undefined, 'kubectl/v1', { apply: false, kind: 'PatchOptions' }), 'kubectl');
    assert.throws(() => resolveManager(undefined, 'kubectl/v1', { apply: true, kind: 'PatchOptions' }), (e: unknown) => e instanceof StatusError && e.httpCode === 422 && /fieldManager: Required value: is required for apply patch/.test(e.message));
    assert.throws(() => resolveManager('x'.repeat(129), '', { apply: false, kind: 'UpdateOptions' }), (e: unknown) => e instanceof StatusError && e.httpCode === 422 && /fieldManager: Too long/.test(e.message));
    assert.throws(() => resolveManager('a\nb', '', { apply: false, kind: 'CreateOptions' }), (e: unknown) => e instanceof StatusError && e.httpCode === 422);
  });
});

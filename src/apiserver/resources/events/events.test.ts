import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldErrors } from '../../status/index.js';
import { coreToStored, storedToCore } from './convert.js';
import { validateCoreEvent, validateV1Event, validateV1EventUpdate } from './validation.js';

const v1 = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  metadata: { name: 'e', namespace: 'default' },
  eventTime: '2024-05-01T10:00:00.000000Z',
  reportingController: 'orch.io/nodeagent',
  reportingInstance: 'node-1',
  action: 'Pulling',
  reason: 'Pulled',
  note: 'pulled',
  type: 'Normal',
  regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
  ...extra,
});

function fields(check: (errors: FieldErrors) => void): string[] {
  const errors = new FieldErrors();
  check(errors);
  return errors.list.map((e) => e.field);
}

void describe('events: conversion between the two views', () => {
  void it('maps every core field to its events.orch.io/v1 name and back', () => {
    const core = {
      kind: 'Event', apiVersion: 'v1', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm',
      source: { component: 'c', host: 'h' }, firstTimestamp: 't1', lastTimestamp: 't2', count: 3, type: 'Normal', eventTime: 'et',
      series: { count: 2, lastObservedTime: 'lo' }, action: 'A', related: { kind: 'Node', name: 'n' }, reportingComponent: 'rc', reportingInstance: 'ri',
    };
    const stored = coreToStored(core);
    assert.deepEqual(stored, {
      kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: { name: 'e' }, note: 'm', regarding: { kind: 'Pod', name: 'p' }, related: { kind: 'Node', name: 'n' },
      reportingController: 'rc', reportingInstance: 'ri', deprecatedSource: { component: 'c', host: 'h' }, deprecatedFirstTimestamp: 't1', deprecatedLastTimestamp: 't2',
      deprecatedCount: 3, series: { count: 2, lastObservedTime: 'lo' }, eventTime: 'et', action: 'A', reason: 'R', type: 'Normal',
    });
    const back = storedToCore(stored);
    assert.deepEqual(Object.keys(back).sort(), Object.keys(core).sort());
    for (const [k, v] of Object.entries(core)) assert.deepEqual(back[k], v, k);
  });
  void it('drops empty values (omitempty)', () => {
    assert.deepEqual(coreToStored({ metadata: {}, source: {}, count: 0, message: '' }), { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: {} });
  });
});

void describe('events: validation', () => {
  void it('accepts a complete new event', () => {
    assert.deepEqual(fields((e) => { validateV1Event(v1(), e); }), []);
    assert.deepEqual(fields((e) => { validateV1Event(v1({ reportingController: 'nodeagent', series: { count: 2, lastObservedTime: 'x' } }), e); }), []);
  });
  void it('names every problem of a new event', () => {
    const bad = v1({ reason: 'r'.repeat(129), reportingController: '-bad/x/y', action: '', type: 'Error', note: 'é'.repeat(600), series: { count: 1 }, deprecatedCount: 2 });
    delete bad.eventTime;
    delete bad.reportingInstance;
    assert.deepEqual(fields((e) => { validateV1Event(bad, e); }).sort(), [
      'action', 'deprecatedCount', 'eventTime', 'note', 'reason', 'reportingController', 'reportingInstance', 'series.count', 'series.lastObservedTime', 'type',
    ]);
  });
  void it('checks the regarding namespace against the event namespace', () => {
    assert.deepEqual(fields((e) => { validateV1Event(v1({ regarding: { kind: 'Pod', name: 'p', namespace: 'other' } }), e); }), ['regarding.namespace']);
    assert.deepEqual(fields((e) => { validateV1Event(v1({ regarding: { kind: 'Node', name: 'n' } }), e); }), []);
    const elsewhere = v1({ regarding: { kind: 'Node', name: 'n' }, metadata: { name: 'e', namespace: 'team' } });
    assert.deepEqual(fields((e) => { validateV1Event(elsewhere, e); }), ['regarding.namespace']);
  });
  void it('lets updates through events.orch.io/v1 change only series and metadata', () => {
    const old = v1();
    assert.deepEqual(fields((e) => { validateV1EventUpdate(v1({ series: { count: 2, lastObservedTime: 'x' }, metadata: { name: 'e', namespace: 'default', labels: { a: 'b' } } }), old, e); }), []);
    assert.deepEqual(fields((e) => { validateV1EventUpdate(v1({ note: 'changed', action: 'Other' }), old, e); }), ['action', 'note']);
  });
  void it('validates old-style core events by their involved object only, new-style ones fully', () => {
    assert.deepEqual(fields((e) => { validateCoreEvent({ metadata: { namespace: 'default' }, involvedObject: { namespace: 'default' } }, e); }), []);
    assert.deepEqual(fields((e) => { validateCoreEvent({ metadata: { namespace: 'a' }, involvedObject: { namespace: 'b' } }, e); }), ['involvedObject.namespace']);
    assert.deepEqual(fields((e) => { validateCoreEvent({ metadata: { namespace: 'default' }, eventTime: 'x', involvedObject: { namespace: 'default' } }, e); }).sort(),
      ['action', 'reason', 'reportingComponent', 'reportingInstance']);
  });
});

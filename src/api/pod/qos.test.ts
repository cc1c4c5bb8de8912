import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../errors.js';
import { qosClass, type QOSClass } from './qos.js';

type Resources = Container['resources'];
const GUARANTEED: Resources = { limits: { cpu: '500m', memory: '64Mi' } };
const BURSTABLE: Resources = { requests: { cpu: '100m' } };

function podWith(uid: string, containers: Resources[], initContainers: Resources[] = []): Pod {
  const make = (prefix: string) => (resources: Resources, i: number): Container =>
    resources === undefined ? { name: `${prefix}${i}` } : { name: `${prefix}${i}`, resources };
  return { metadata: { name: `pod-${uid}`, uid }, spec: { containers: containers.map(make('c')), initContainers: initContainers.map(make('i')) } };
}

void describe('qosClass', () => {
  const cases: [string, Parameters<typeof podWith>[1], Parameters<typeof podWith>[2], QOSClass][] = [
    ['no resources at all', [undefined, {}], [], 'BestEffort'],
    ['only zero quantities and other resources', [{ requests: { cpu: '0', 'ephemeral-storage': '1Gi' }, limits: { memory: '0' } }], [], 'BestEffort'],
    ['limits only (requests default to them)', [GUARANTEED, GUARANTEED], [], 'Guaranteed'],
    ['requests equal to limits in other units', [{ requests: { cpu: '0.5', memory: '67108864' }, limits: { cpu: '500m', memory: '64Mi' } }], [], 'Guaranteed'],
    ['a guaranteed init container too', [GUARANTEED], [GUARANTEED], 'Guaranteed'],
    ['a request below its limit', [{ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '64Mi' } }], [], 'Burstable'],
    ['a memory limit only', [{ limits: { memory: '64Mi' } }], [], 'Burstable'],
    ['one guaranteed, one best-effort container', [GUARANTEED, undefined], [], 'Burstable'],
    ['a best-effort app with a burstable init container', [undefined], [BURSTABLE], 'Burstable'],
    ['a request only', [BURSTABLE], [], 'Burstable'],
  ];
  for (const [what, containers, init, expected] of cases) {
    void it(`${expected} for ${what}`, () => {
      assert.equal(qosClass(podWith('u', containers, init)), expected);
    });
  }

  void it('keeps a class already in status.qosClass', () => {
    assert.equal(qosClass({ ...podWith('u', [GUARANTEED]), status: { qosClass: 'Burstable' } }), 'Burstable');
  });

  void it('names the field of a malformed quantity', () => {
    assert.throws(() => qosClass(podWith('u', [undefined, { limits: { cpu: 'lots' } }])), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.subject, 'spec.containers[1].resources.limits.cpu');
      return true;
    });
  });
});

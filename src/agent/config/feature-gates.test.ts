import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { specText } from './fixtures.js';
import { FEATURE_GATES, featureGateHelp, resolveFeatureGates, unknownGates } from './feature-gates.js';

void describe('feature gates', () => {
  void it('knows the spec list with stages and defaults', () => {
    assert.deepEqual(FEATURE_GATES.get('GracefulNodeShutdown'), { stage: 'beta', default: true });
    assert.deepEqual(FEATURE_GATES.get('EventedPLEG'), { stage: 'beta', default: false });
    assert.deepEqual(FEATURE_GATES.get('WinHostNetwork'), { stage: 'alpha', default: true });
    assert.deepEqual(FEATURE_GATES.get('SidecarContainers'), { stage: 'alpha', default: false });
    assert.equal([...FEATURE_GATES.keys()].filter((n) => /^InTreePlugin.*Unregister$/.test(n)).length, 7);
    assert.equal([...FEATURE_GATES.keys()].filter((n) => n.startsWith('CSIMigration')).length, 1);
  });

  void it('matches the spec list name by name', () => {
    const lines = specText('feature-gates.txt').split('\n').filter((l) => /^\s+- (Alpha|Beta), default (true|false): /.test(l));
    assert.equal(lines.length, 4);
    let templated = 0;
    let listed = 0;
    for (const line of lines) {
      const m = /- (Alpha|Beta), default (true|false): (.*)\.$/.exec(line);
      assert.ok(m);
      for (const name of (m[3] ?? '').split(', ')) {
        if (name.includes('<')) {
          templated += name.startsWith('seven') ? 7 : 1;
          continue;
        }
        listed++;
        assert.deepEqual(FEATURE_GATES.get(name), { stage: m[1]?.toLowerCase(), default: m[2] === 'true' }, name);
      }
    }
    assert.equal(FEATURE_GATES.size, listed + templated);
  });

  void it('lets explicit entries win over AllAlpha and AllBeta, which win over defaults', () => {
    const g = resolveFeatureGates({ AllAlpha: true, AllBeta: false, SidecarContainers: false, NodeSwap: true });
    assert.equal(g.enabled('QOSReserved'), true);
    assert.equal(g.enabled('SidecarContainers'), false);
    assert.equal(g.enabled('GracefulNodeShutdown'), false);
    assert.equal(g.enabled('NodeSwap'), true);
    assert.equal(resolveFeatureGates(null).enabled('GracefulNodeShutdown'), true);
    assert.equal(resolveFeatureGates(null).enabled('Unknown'), false);
  });

  void it('names unknown gates, not the group switches', () => {
    assert.deepEqual(unknownGates({ AllAlpha: true, Nope: true, QOSReserved: false }), ['Nope']);
    assert.match(featureGateHelp(), /^AllAlpha=true\|false \(ALPHA - default=false\)$/m);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from '../../api/errors.js';
import { CM_INVALID, fsComponents, podCgroupParent, podUIDFromDir, rootName, type CgroupConfig } from './cgroup-name.js';
import { BURSTABLE, GUARANTEED, podWith } from './fixtures.js';

const UID = '8dbc5a1c-1b2d-4a5e-9f00-123456789abc';
const guaranteed = podWith(UID, [GUARANTEED]);
const burstable = podWith(UID, [BURSTABLE]);
const bestEffort = podWith(UID, [undefined]);

const cgroupfs: CgroupConfig = { cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs' };
const systemd: CgroupConfig = { cgroupRoot: '/', cgroupsPerQOS: true, cgroupDriver: 'systemd' };

void describe('podCgroupParent', () => {
  void it('cgroupfs with cgroupsPerQOS: guaranteed under orchpods, others under their QoS cgroup', () => {
    assert.equal(podCgroupParent(guaranteed, cgroupfs), `/orchpods/pod${UID}`);
    assert.equal(podCgroupParent(burstable, cgroupfs), `/orchpods/burstable/pod${UID}`);
    assert.equal(podCgroupParent(bestEffort, cgroupfs), `/orchpods/besteffort/pod${UID}`);
  });

  void it('cgroupfs below a cgroup root, with and without cgroupsPerQOS', () => {
    assert.equal(podCgroupParent(burstable, { ...cgroupfs, cgroupRoot: '/' }), `/orchpods/burstable/pod${UID}`);
    assert.equal(podCgroupParent(burstable, { ...cgroupfs, cgroupRoot: '/custom/root/' }), `/custom/root/orchpods/burstable/pod${UID}`);
    assert.equal(podCgroupParent(burstable, { ...cgroupfs, cgroupsPerQOS: false }), `/pod${UID}`);
    assert.equal(podCgroupParent(guaranteed, { ...cgroupfs, cgroupsPerQOS: false, cgroupRoot: '/r' }), `/r/pod${UID}`);
  });

  void it('systemd: slice names with - escaped as _', () => {
    const escaped = UID.replace(/-/g, '_');
    assert.equal(podCgroupParent(guaranteed, systemd), `orchpods-pod${escaped}.slice`);
    assert.equal(podCgroupParent(burstable, systemd), `orchpods-burstable-pod${escaped}.slice`);
    assert.equal(podCgroupParent(bestEffort, { ...systemd, cgroupRoot: 'my-root.slice' }), `my-root-orchpods-besteffort-pod${escaped}.slice`);
    assert.equal(podCgroupParent(burstable, { ...systemd, cgroupsPerQOS: false }), `pod${escaped}.slice`);
  });

  void it('rejects a pod without a usable UID', () => {
    for (const uid of ['', '../x', 'a_b', 'a/b']) {
      assert.throws(() => podCgroupParent(podWith(uid, [undefined]), cgroupfs), (err: unknown) => err instanceof OrchError && err.code === CM_INVALID);
    }
  });
});

void describe('cgroup names', () => {
  void it('parses a systemd cgroup root as a slice', () => {
    assert.deepEqual(rootName({ ...systemd, cgroupRoot: '/a.slice/a-b_c.slice' }), ['a', 'b-c']);
    assert.deepEqual(rootName({ ...systemd, cgroupRoot: '-.slice' }), []);
    assert.deepEqual(rootName({ ...cgroupfs, cgroupRoot: '/a/b' }), ['a', 'b']);
  });

  void it('expands a systemd name into one slice directory per level', () => {
    assert.deepEqual(fsComponents(['orchpods', 'burstable', 'pod1-2'], 'systemd'), [
      'orchpods.slice', 'orchpods-burstable.slice', 'orchpods-burstable-pod1_2.slice',
    ]);
    assert.deepEqual(fsComponents(['orchpods', 'pod1'], 'cgroupfs'), ['orchpods', 'pod1']);
  });

  void it('reads pod UIDs back from directory names, and nothing else', () => {
    assert.equal(podUIDFromDir(`pod${UID}`, ['orchpods'], cgroupfs), UID);
    assert.equal(podUIDFromDir('burstable', ['orchpods'], cgroupfs), undefined);
    assert.equal(podUIDFromDir(`orchpods-burstable-pod${UID.replace(/-/g, '_')}.slice`, ['orchpods', 'burstable'], systemd), UID);
    assert.equal(podUIDFromDir('orchpods-burstable.slice', ['orchpods'], systemd), undefined);
    const shared: CgroupConfig = { ...cgroupfs, cgroupsPerQOS: false };
    assert.equal(podUIDFromDir('podman', [], shared), undefined);
    assert.equal(podUIDFromDir(`pod${UID}`, [], shared), UID);
  });
});

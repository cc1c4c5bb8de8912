import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { encodeContainerAllocation } from './api.js';
import { checkpointChecksum, decodeCheckpoint, encodeCheckpoint, entryAllocation, type CheckpointData } from './checkpoint.js';

// Checkpoints written by the upstream agent (with its Go checksum), as found on real nodes.
const UPSTREAM_NO_PODS = '{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280}';
const UPSTREAM_ONE_POD = '{"Data":{"PodDeviceEntries":[{"PodUID":"bf52b2cd-b611-4e79-86b1-280b283185c3","ContainerName":"check","ResourceName":"nvidia.com/gpu",'
  + '"DeviceIDs":{"-1":["tegra"]},"AllocResp":"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh"}],"RegisteredDevices":{"nvidia.com/gpu":["tegra"]}},"Checksum":3660592824}';

void describe('the device manager checkpoint', () => {
  void it("reads the upstream agent's checkpoints and verifies their checksums", () => {
    const empty = decodeCheckpoint('/cp', UPSTREAM_NO_PODS);
    assert.equal(empty.entries, null);
    assert.deepEqual([...empty.registered], [['nvidia.com/gpu', ['GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0']]]);
    const one = decodeCheckpoint('/cp', UPSTREAM_ONE_POD);
    const entry = one.entries?.[0];
    assert.ok(entry !== undefined);
    assert.deepEqual([entry.podUID, entry.containerName, entry.resourceName, [...entry.deviceIds]], ['bf52b2cd-b611-4e79-86b1-280b283185c3', 'check', 'nvidia.com/gpu', [[-1, ['tegra']]]]);
    assert.deepEqual(entryAllocation(entry).envs, { NVIDIA_VISIBLE_DEVICES: 'tegra' });
  });

  void it('writes what it reads back, with the checksum upstream would compute', () => {
    const allocResp = encodeContainerAllocation({
      envs: { DEV: 'a,b' }, mounts: [{ containerPath: '/lib', hostPath: '/opt/lib', readOnly: true }],
      devices: [{ containerPath: '/dev/a', hostPath: '/dev/null', permissions: 'rw' }], annotations: { 'example.com/a': '1' }, cdiDevices: ['vendor.com/dev=a'],
    });
    const data: CheckpointData = {
      entries: [{ podUID: 'uid', containerName: 'main', resourceName: 'example.com/dev', deviceIds: new Map([[0, ['a']], [1, ['b']]]), allocResp }],
      registered: new Map([['example.com/dev', ['a', 'b', 'c']], ['example.com/empty', []]]),
    };
    const text = encodeCheckpoint(data);
    assert.match(text, /"RegisteredDevices":\{"example.com\/dev":\["a","b","c"\],"example.com\/empty":\[\]\}\},"Checksum":\d+\}$/);
    const back = decodeCheckpoint('/cp', text);
    assert.equal(checkpointChecksum(back), checkpointChecksum(data));
    const allocation = entryAllocation(back.entries![0]!);
    assert.deepEqual(allocation.mounts, [{ containerPath: '/lib', hostPath: '/opt/lib', readOnly: true }]);
    assert.deepEqual(allocation.cdiDevices, ['vendor.com/dev=a']);
    assert.equal(encodeCheckpoint({ entries: null, registered: new Map() }).startsWith('{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}}'), true);
  });

  void it('refuses a changed or damaged file, naming it', () => {
    const edited = UPSTREAM_ONE_POD.replace('"tegra"]}}', '"tegra","other"]}}');
    assert.throws(() => decodeCheckpoint('/var/lib/nodeagent/device-plugins/nodeagent_internal_checkpoint', edited),
      /checkpoint \/var\/lib\/nodeagent\/device-plugins\/nodeagent_internal_checkpoint: checksum 3660592824 does not match the content/);
    assert.throws(() => decodeCheckpoint('/cp', '{"Data":'), /checkpoint \/cp: not JSON/);
    assert.throws(() => decodeCheckpoint('/cp', '{"Data":{"PodDeviceEntries":[{"PodUID":1}]}}'), /PodDeviceEntries\[0\]\.PodUID is not a string/);
    assert.throws(() => decodeCheckpoint('/cp', '{"Data":{"PodDeviceEntries":[{"PodUID":"u","ContainerName":"c","ResourceName":"r","DeviceIDs":{"x":["a"]}}]}}'), /NUMA node "x" is not an integer/);
  });
});

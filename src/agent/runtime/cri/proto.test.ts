import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import path from 'node:path';
import { isOrchError } from '../../../api/errors.js';
import { criMethods, findCriProto, type CriMethod } from './proto.js';

/** The bytes of one field's tag: (field number << 3) | wire type, as a varint. */
function tag(field: number, wireType: number): Buffer {
  let value = (field << 3) | wireType;
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function method(service: 'RuntimeService' | 'ImageService', name: string): CriMethod {
  const m = criMethods(service).get(name);
  assert.ok(m, `${service}.${name}`);
  return m;
}

// containerd 1.6 never sends these fields, so the integration test cannot check their numbers:
// check the wire encoding of our proto instead.
void describe('cri-v1.proto field numbers', () => {
  void it('ContainerStatus image_id = 17, user = 18', () => {
    const bytes = method('RuntimeService', 'ContainerStatus').responseSerialize({
      status: { imageId: 'sha256:abc', user: { linux: { uid: '7' } } },
    });
    assert.ok(bytes.includes(Buffer.concat([tag(17, 2), Buffer.from([10]), Buffer.from('sha256:abc')])));
    assert.ok(bytes.includes(tag(18, 2)));
  });

  void it('CheckpointContainerRequest container_id = 1, location = 2, timeout = 3', () => {
    const bytes = method('RuntimeService', 'CheckpointContainer').requestSerialize({ containerId: 'c', location: '/l', timeout: 7 });
    assert.deepEqual([...bytes], [...tag(1, 2), 1, ...Buffer.from('c'), ...tag(2, 2), 2, ...Buffer.from('/l'), ...tag(3, 0), 7]);
  });

  void it('Container image_id = 10', () => {
    const bytes = method('RuntimeService', 'ListContainers').responseSerialize({ containers: [{ imageId: 'img' }] });
    assert.ok(bytes.includes(Buffer.concat([tag(10, 2), Buffer.from([3]), Buffer.from('img')])));
  });

  void it('ImageSpec user_specified_image = 18, runtime_handler = 19', () => {
    const bytes = method('ImageService', 'PullImage').requestSerialize({
      image: { image: 'a', userSpecifiedImage: 'bb', runtimeHandler: 'ccc' },
    });
    assert.ok(bytes.includes(Buffer.concat([tag(18, 2), Buffer.from([2]), Buffer.from('bb')])));
    assert.ok(bytes.includes(Buffer.concat([tag(19, 2), Buffer.from([3]), Buffer.from('ccc')])));
  });

  void it('PodSandboxStatusResponse containers_statuses = 3, timestamp = 4', () => {
    const bytes = method('RuntimeService', 'PodSandboxStatus').responseSerialize({
      containersStatuses: [{ id: 'c' }],
      timestamp: '5',
    });
    assert.ok(bytes.includes(tag(3, 2)));
    assert.ok(bytes.includes(Buffer.concat([tag(4, 0), Buffer.from([5])])));
  });

  void it('decodes 64-bit integers as exact decimal strings and absent messages as null', () => {
    const m = method('RuntimeService', 'ContainerStatus');
    const decoded = m.responseDeserialize(m.responseSerialize({ status: { createdAt: '1795317459973859136' } }));
    assert.deepEqual(Reflect.get(Reflect.get(decoded, 'status') as object, 'createdAt'), '1795317459973859136');
    assert.equal(Reflect.get(Reflect.get(decoded, 'status') as object, 'user'), null);
  });

  void it('has every method the agent calls', () => {
    assert.equal(criMethods('RuntimeService').size, 25);
    assert.deepEqual([...criMethods('ImageService').keys()].sort(), [
      'ImageFsInfo',
      'ImageStatus',
      'ListImages',
      'PullImage',
      'RemoveImage',
    ]);
  });

  void it('finds the proto from the compiled location and fails clearly elsewhere', () => {
    assert.ok(findCriProto().endsWith(path.join('proto', 'cri-v1.proto')));
    assert.throws(
      () => findCriProto('/'),
      (err: unknown) => isOrchError(err) && err.code === 'CRI_PROTO_MISSING',
    );
  });
});

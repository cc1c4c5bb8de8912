import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canEncode, decodeObject, decodeWatchFrames, encodeObject, encodeWatchFrame, MAGIC, messageType, ProtobufDecodeError } from './index.js';
import { namedType } from './types.js';

/** The message of an encoding, as protobufjs reads it (own properties are the fields on the wire). */
function raw(bytes: Buffer): Record<string, unknown> {
  const envelope = namedType('orch.meta.v1.Unknown').decode(bytes.subarray(4)) as unknown as { typeMeta: { apiVersion: string; kind: string }; raw: Uint8Array };
  const type = messageType(envelope.typeMeta.apiVersion, envelope.typeMeta.kind);
  assert.ok(type);
  return type.toObject(type.decode(envelope.raw), { longs: Number, bytes: String });
}

void describe('the protobuf encoding', () => {
  void it('wraps objects in the k8s\\0 envelope with their apiVersion and kind, upstream field numbers inside', () => {
    const bytes = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
    assert.deepEqual(bytes.subarray(0, 4), MAGIC);
    // Unknown.typeMeta (1) {apiVersion (1) "v1", kind (2) "ConfigMap"}, then raw (2): ConfigMap.metadata (1) {name (1) "a"}, data (2) map entry k=v.
    assert.equal(bytes.subarray(4).toString('hex'), `0a0f0a0276311209${Buffer.from('ConfigMap').toString('hex')}120d0a030a016112060a016b120176`);
    assert.deepEqual(decodeObject(bytes), { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' }, data: { k: 'v' } });
  });

  void it('converts the apimachinery value types and bytes to and from their JSON forms', () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2024-01-02T03:04:05Z', deletionGracePeriodSeconds: 0 },
      spec: {
        containers: [{
          name: 'c', image: 'i',
          resources: { limits: { cpu: '500m', memory: '1Gi' } },
          livenessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 3 },
          readinessProbe: { tcpSocket: { port: 8080 } },
          securityContext: { runAsUser: 0, allowPrivilegeEscalation: false },
        }],
        volumes: [{ name: 'v', emptyDir: {} }, { name: 'cm', configMap: { name: 'x', defaultMode: 420 } }],
        terminationGracePeriodSeconds: 0,
      },
      status: { phase: 'Running', startTime: '2024-01-02T03:04:06Z' },
    };
    assert.deepEqual(decodeObject(encodeObject(pod)), pod);
    const event = { apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'e' }, eventTime: '2024-05-01T10:00:00.123456Z', note: 'n' };
    assert.deepEqual(decodeObject(encodeObject(event)), event);
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: Buffer.from([0, 1, 2]).toString('base64') }, type: 'Opaque' };
    assert.deepEqual(decodeObject(encodeObject(secret)), secret);
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {}, status: { userInfo: { username: 'u', extra: { scopes: ['a', 'b'] } } } };
    assert.deepEqual(decodeObject(encodeObject(review)), { ...review, metadata: {} });
  });

  void it('carries managedFields, their FieldsV1 as the raw JSON upstream puts in the bytes', () => {
    const fieldsV1 = { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:k:x': {} } } };
    const entry = { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2024-05-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1 };
    const status = { manager: 'nodeagent', operation: 'Update', apiVersion: 'v1', time: '2024-05-01T10:00:01Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} }, subresource: 'status' };
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', managedFields: [entry, status] }, data: { a: 'b' } };
    const bytes = encodeObject(cm);
    assert.deepEqual(decodeObject(bytes), cm);
    const meta = raw(bytes).metadata as { managedFields: { fieldsV1: { Raw: string } }[] };
    assert.deepEqual(JSON.parse(Buffer.from(meta.managedFields[0]?.fieldsV1.Raw ?? '', 'base64').toString()), fieldsV1);
  });

  void it('reads zeros of implicit fields as absent and keeps those of optional ones (Go pointers)', () => {
    const type = messageType('v1', 'Container');
    assert.ok(type);
    const pod = messageType('v1', 'Pod');
    assert.ok(pod);
    // What a Go client writes: every non-pointer scalar, zero or not; pointers only when set.
    const message = pod.encode({
      metadata: { name: 'p', generation: 0, namespace: '' },
      spec: { containers: [{ name: 'c', stdin: false, tty: false, securityContext: { runAsUser: 0 } }], hostNetwork: false, terminationGracePeriodSeconds: 0 },
    }).finish();
    const unknown = namedType('orch.meta.v1.Unknown').encode({ typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw: message }).finish();
    assert.deepEqual(decodeObject(Buffer.concat([MAGIC, unknown])), {
      kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', securityContext: { runAsUser: 0 } }], terminationGracePeriodSeconds: 0 },
    });
    assert.deepEqual(raw(encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })), { metadata: { name: 'p' } });
  });

  void it('frames watch events with their lengths, each object in its own envelope', () => {
    const frames = Buffer.concat([
      encodeWatchFrame('v1', 'ADDED', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', resourceVersion: '5' } }),
      encodeWatchFrame('v1', 'ERROR', { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', reason: 'Expired', code: 410 }),
    ]);
    assert.equal(frames.readUInt32BE(0) + 4 < frames.length, true);
    const { events, rest } = decodeWatchFrames(Buffer.concat([frames, Buffer.from([0, 0])]));
    assert.deepEqual(events, [
      { type: 'ADDED', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '5' } } },
      { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410 } },
    ]);
    assert.equal(rest.length, 2);
  });

  void it('refuses bodies that are not ours, naming what is wrong', () => {
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Pod"}')), (err: unknown) => err instanceof ProtobufDecodeError && /magic bytes/.test(err.message));
    const noKind = Buffer.concat([MAGIC, namedType('orch.meta.v1.Unknown').encode({ typeMeta: { apiVersion: 'v1' } }).finish()]);
    assert.throws(() => decodeObject(noKind), /names no kind/);
    const unknownKind = Buffer.concat([MAGIC, namedType('orch.meta.v1.Unknown').encode({ typeMeta: { apiVersion: 'v1', kind: 'Widget' } }).finish()]);
    assert.throws(() => decodeObject(unknownKind), /no protobuf message type for kind "Widget" in "v1"/);
    assert.throws(() => decodeObject(Buffer.concat([MAGIC, Buffer.from([0x0a, 0xff])])), /envelope cannot be read/);
    assert.equal(canEncode('v1', 'Widget'), false);
    assert.equal(canEncode('certificates.k8s.io/v1', 'CertificateSigningRequest'), true);
  });
});

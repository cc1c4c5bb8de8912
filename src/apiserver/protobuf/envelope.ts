/**
 * The Kubernetes protobuf encoding of whole objects: the magic bytes `k8s\0`, then an Unknown
 * message naming the object's apiVersion and kind and holding the object's message in `raw`.
 * Watch streams send each event as such an encoding of a WatchEvent (whose `object.raw` is the
 * object's own encoding) behind a 4-byte big-endian length.
 */
import { messageFromJson, messageToJson } from './convert.js';
import { messageType, namedType } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A body that is not a protobuf object we can read; `subject` names what was wrong. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

type Obj = Record<string, unknown>;

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Whether `apiVersion`/`kind` has a message type (so it can be written as protobuf). */
export function canEncode(apiVersion: string, kind: string): boolean {
  return messageType(apiVersion, kind) !== undefined;
}

/** The encoding of one JSON object (its `apiVersion` and `kind` choose the message type). */
export function encodeObject(object: Obj): Buffer {
  const apiVersion = text(object.apiVersion);
  const kind = text(object.kind);
  const type = messageType(apiVersion, kind);
  if (type === undefined) throw new Error(`no protobuf message type for ${kind} in ${apiVersion === '' ? 'no apiVersion' : apiVersion}`);
  const raw = type.encode(messageFromJson(type, object) ?? {}).finish();
  const unknown = namedType('orch.meta.v1.Unknown').encode({ typeMeta: { apiVersion, kind }, raw }).finish();
  return Buffer.concat([MAGIC, unknown]);
}

/** The JSON object of an encoding (with its apiVersion and kind). Throws ProtobufDecodeError. */
export function decodeObject(bytes: Uint8Array): Obj {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ProtobufDecodeError('the body does not start with the protobuf magic bytes "k8s\\x00"');
  }
  let envelope: Obj;
  try {
    envelope = namedType('orch.meta.v1.Unknown').decode(body.subarray(MAGIC.length)) as unknown as Obj;
  } catch (err) {
    throw new ProtobufDecodeError(`the protobuf envelope cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const typeMeta = (envelope.typeMeta ?? {}) as Obj;
  const apiVersion = text(typeMeta.apiVersion);
  const kind = text(typeMeta.kind);
  if (kind === '') throw new ProtobufDecodeError('the protobuf envelope names no kind');
  const type = messageType(apiVersion, kind);
  if (type === undefined) throw new ProtobufDecodeError(`no protobuf message type for kind ${quoteValue(kind)} in ${quoteValue(apiVersion)}`);
  let message: Obj;
  try {
    message = type.decode((envelope.raw as Uint8Array | undefined) ?? new Uint8Array()) as unknown as Obj;
  } catch (err) {
    throw new ProtobufDecodeError(`the ${kind} message cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const json = messageToJson(type, message) as Obj;
  return { kind, apiVersion, ...json };
}

/**
 * One frame of a protobuf watch stream: the length, then the encoding of a WatchEvent of
 * `apiVersion` whose object is `object`'s own encoding.
 */
export function encodeWatchFrame(apiVersion: string, eventType: string, object: Obj): Buffer {
  const raw = encodeObject(object);
  const event = namedType('orch.meta.v1.WatchEvent').encode({ type: eventType, object: { raw } }).finish();
  const unknown = namedType('orch.meta.v1.Unknown').encode({ typeMeta: { apiVersion, kind: 'WatchEvent' }, raw: event }).finish();
  const length = Buffer.alloc(4);
  length.writeUInt32BE(MAGIC.length + unknown.length);
  return Buffer.concat([length, MAGIC, unknown]);
}

/** Reads the frames of a protobuf watch stream (tests and clients): type and object of each. */
export function decodeWatchFrames(stream: Buffer): { events: { type: string; object: Obj }[]; rest: Buffer } {
  const events: { type: string; object: Obj }[] = [];
  let offset = 0;
  while (stream.length - offset >= 4) {
    const length = stream.readUInt32BE(offset);
    if (stream.length - offset - 4 < length) break;
    const frame = stream.subarray(offset + 4, offset + 4 + length);
    offset += 4 + length;
    const envelope = namedType('orch.meta.v1.Unknown').decode(frame.subarray(MAGIC.length)) as unknown as Obj;
    const event = namedType('orch.meta.v1.WatchEvent').decode((envelope.raw as Uint8Array | undefined) ?? new Uint8Array()) as unknown as Obj;
    const raw = ((event.object ?? {}) as Obj).raw as Uint8Array | undefined;
    events.push({ type: text(event.type), object: raw === undefined ? {} : decodeObject(raw) });
  }
  return { events, rest: stream.subarray(offset) };
}

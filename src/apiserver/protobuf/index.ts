/**
 * protobuf: the Kubernetes protobuf encoding of orch-apiserver's objects (the `k8s\0` magic,
 * the Unknown envelope, the message types of proto/orch numbered as upstream's API types), for
 * request bodies, responses, lists and watch streams under the media types
 * `application/vnd.kubernetes.protobuf` and `application/vnd.orch.protobuf`. The messages are
 * read and written with protobufjs from the .proto files; this module converts them from and to
 * the JSON form the registry handles.
 *
 * Must not: know resources, HTTP or the store; validate objects (the registry decodes the JSON
 * form strictly after this module, as for JSON bodies).
 */
export { canEncode, decodeObject, decodeWatchFrames, encodeObject, encodeWatchFrame, MAGIC, ProtobufDecodeError } from './envelope.js';
export { messageFromJson, messageToJson } from './convert.js';
export { encodeMessage, findProtoDir, messageType, packageOf, protoRoot } from './types.js';

/** The media types of the protobuf encoding (upstream's name, and ours). */
export const PROTOBUF_MEDIA_TYPES = ['application/vnd.kubernetes.protobuf', 'application/vnd.orch.protobuf'] as const;

export function isProtobufMediaType(type: string): boolean {
  return (PROTOBUF_MEDIA_TYPES as readonly string[]).includes(type);
}

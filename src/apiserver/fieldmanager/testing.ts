/**
 * A small schema for the field manager's tests, shaped like upstream's core types where the
 * merge rules matter: a map list keyed by name (containers), one keyed by two fields with a
 * defaulted key (ports: containerPort and protocol, TCP by default), a set (finalizers), atomic
 * lists (args, tolerations), a granular map (labels), an atomic map (nodeSelector), an atomic
 * struct (a key selector), a deduced field (securityContext) and a status.
 */
import { any, array, int32, object, objectMeta, str, stringMap, type ObjectSchema } from '../schema/index.js';

const port = object({ name: str(), containerPort: int32(), protocol: str(undefined, { default: 'TCP' }) });
const env = object({
  name: str(),
  value: str(),
  valueFrom: object({ configMapKeyRef: object({ name: str(), key: str() }, { mapType: 'atomic' }) }),
});
const container = object({
  name: str(),
  image: str(),
  args: array(str()),
  ports: array(port, { mergeKey: 'containerPort', patchStrategy: 'merge', listMapKeys: ['containerPort', 'protocol'] }),
  env: array(env, { mergeKey: 'name', patchStrategy: 'merge' }),
  securityContext: any(),
});

export const testSchema: ObjectSchema = object({
  apiVersion: str(),
  kind: str(),
  metadata: objectMeta,
  spec: object({
    containers: array(container, { mergeKey: 'name', patchStrategy: 'merge' }),
    tolerations: array(object({ key: str(), effect: str() })),
    nodeSelector: stringMap(undefined, { mapType: 'atomic' }),
    replicas: int32(),
    paused: str(),
  }),
  data: stringMap(),
  status: object({
    phase: str(),
    conditions: array(object({ type: str(), status: str() }), { mergeKey: 'type', patchStrategy: 'merge' }),
  }),
});

/**
 * The container part of the Pod schema (core v1 Container, EphemeralContainer and what they
 * hold: ports, env, probes, lifecycle handlers, resources, mounts). Strategic merge keys as
 * upstream: env and volumeMounts... by name / mountPath, ports by containerPort (applied by
 * containerPort and protocol, which defaults to TCP); command, args and envFrom atomic. Deep and rarely
 * used subtrees (securityContext) are kept as given and checked by the pod validation.
 */
import { any, array, bool, int32, int64, object, str, type ObjectSchema, type Schema } from '../../schema/index.js';
import { quantities } from '../nodes/index.js';

const intOrString: Schema = { type: 'int-or-string' };

const keySelector = (name: string): ObjectSchema =>
  object({ name: str('Name of the referent.'), key: str('The key to select.'), optional: bool('Whether the referent must exist.') }, { name, required: ['key'], mapType: 'atomic' });

export const objectFieldSelector = object(
  { apiVersion: str('Version of the schema the FieldPath is written in terms of (default v1).'), fieldPath: str('Path of the field to select.') },
  { name: 'io.orch.api.core.v1.ObjectFieldSelector', required: ['fieldPath'], mapType: 'atomic' },
);

export const resourceFieldSelector = object(
  { containerName: str('Container name (required for volumes).'), resource: str('Required: resource to select.'), divisor: intOrString },
  { name: 'io.orch.api.core.v1.ResourceFieldSelector', required: ['resource'], mapType: 'atomic' },
);

const envVar = object(
  {
    name: str('Name of the environment variable (a C identifier).'),
    value: str('Value, with $(VAR_NAME) references expanded.'),
    valueFrom: object(
      {
        fieldRef: objectFieldSelector,
        resourceFieldRef: resourceFieldSelector,
        configMapKeyRef: keySelector('io.orch.api.core.v1.ConfigMapKeySelector'),
        secretKeyRef: keySelector('io.orch.api.core.v1.SecretKeySelector'),
      },
      { name: 'io.orch.api.core.v1.EnvVarSource' },
    ),
  },
  { name: 'io.orch.api.core.v1.EnvVar', required: ['name'] },
);

const envFrom = object(
  {
    prefix: str('An identifier to prepend to each key.'),
    configMapRef: object({ name: str(), optional: bool() }, { name: 'io.orch.api.core.v1.ConfigMapEnvSource' }),
    secretRef: object({ name: str(), optional: bool() }, { name: 'io.orch.api.core.v1.SecretEnvSource' }),
  },
  { name: 'io.orch.api.core.v1.EnvFromSource' },
);

const httpGet = object(
  {
    host: str('Host name to connect to, defaults to the pod IP.'),
    path: str('Path to access on the HTTP server.'),
    port: intOrString,
    scheme: str('HTTP or HTTPS.'),
    httpHeaders: array(object({ name: str(), value: str() }, { name: 'io.orch.api.core.v1.HTTPHeader', required: ['name', 'value'] })),
  },
  { name: 'io.orch.api.core.v1.HTTPGetAction', required: ['port'] },
);
const tcpSocket = object({ host: str(), port: intOrString }, { name: 'io.orch.api.core.v1.TCPSocketAction', required: ['port'] });
const exec = object({ command: array(str()) }, { name: 'io.orch.api.core.v1.ExecAction' });
const handler = object(
  { exec, httpGet, tcpSocket, sleep: object({ seconds: int64() }, { name: 'io.orch.api.core.v1.SleepAction', required: ['seconds'] }) },
  { name: 'io.orch.api.core.v1.LifecycleHandler' },
);

const probe = object(
  {
    exec, httpGet, tcpSocket,
    grpc: object({ port: int32(), service: str() }, { name: 'io.orch.api.core.v1.GRPCAction', required: ['port'] }),
    initialDelaySeconds: int32(), timeoutSeconds: int32(), periodSeconds: int32(), successThreshold: int32(), failureThreshold: int32(),
    terminationGracePeriodSeconds: int64(),
  },
  { name: 'io.orch.api.core.v1.Probe' },
);

const port = object(
  {
    name: str('An IANA_SVC_NAME, unique within the pod.'),
    hostPort: int32('Number of the port to expose on the host.'),
    containerPort: int32('Number of the port to expose on the pod\'s IP address.'),
    protocol: str('UDP, TCP or SCTP (default TCP).', { default: 'TCP' }),
    hostIP: str('What host IP to bind the external port to.'),
  },
  { name: 'io.orch.api.core.v1.ContainerPort', required: ['containerPort'] },
);

const volumeMount = object(
  {
    name: str('This must match the Name of a Volume.'),
    readOnly: bool(), recursiveReadOnly: str(),
    mountPath: str('Path within the container at which the volume should be mounted.'),
    subPath: str(), subPathExpr: str(), mountPropagation: str(),
  },
  { name: 'io.orch.api.core.v1.VolumeMount', required: ['name', 'mountPath'] },
);

const containerFields = {
  name: str('Name of the container, a DNS label unique within the pod.'),
  image: str('Container image name.'),
  command: array(str(), { description: 'Entrypoint array; not run in a shell.' }),
  args: array(str(), { description: 'Arguments to the entrypoint.' }),
  workingDir: str(),
  // Strategic merge patches merge ports by containerPort; apply keys them by port and protocol.
  ports: array(port, { mergeKey: 'containerPort', patchStrategy: 'merge', listMapKeys: ['containerPort', 'protocol'] }),
  envFrom: array(envFrom),
  env: array(envVar, { mergeKey: 'name', patchStrategy: 'merge' }),
  resources: object(
    { limits: quantities, requests: quantities, claims: array(object({ name: str() }, { name: 'io.orch.api.core.v1.ResourceClaim' }), { listType: 'map', listMapKeys: ['name'] }) },
    { name: 'io.orch.api.core.v1.ResourceRequirements' },
  ),
  resizePolicy: array(object({ resourceName: str(), restartPolicy: str() }, { name: 'io.orch.api.core.v1.ContainerResizePolicy' })),
  restartPolicy: str('Init containers only: Always makes a sidecar.'),
  volumeMounts: array(volumeMount, { mergeKey: 'mountPath', patchStrategy: 'merge' }),
  volumeDevices: array(object({ name: str(), devicePath: str() }, { name: 'io.orch.api.core.v1.VolumeDevice' }), { mergeKey: 'devicePath', patchStrategy: 'merge' }),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle: object({ postStart: handler, preStop: handler }, { name: 'io.orch.api.core.v1.Lifecycle' }),
  terminationMessagePath: str(),
  terminationMessagePolicy: str('File or FallbackToLogsOnError.'),
  imagePullPolicy: str('Always, Never or IfNotPresent.'),
  securityContext: any('Security options the container runs with (SecurityContext).'),
  stdin: bool(), stdinOnce: bool(), tty: bool(),
};

export const containerSchema = object(containerFields, { name: 'io.orch.api.core.v1.Container', required: ['name'] });

export const ephemeralContainerSchema = object(
  { ...containerFields, targetContainerName: str('The container whose namespaces this ephemeral container targets.') },
  { name: 'io.orch.api.core.v1.EphemeralContainer', required: ['name'] },
);

export const keyToPaths = array(object({ key: str(), path: str(), mode: int32() }, { name: 'io.orch.api.core.v1.KeyToPath', required: ['key', 'path'] }));

export const downwardItems = array(object(
  { path: str(), fieldRef: objectFieldSelector, resourceFieldRef: resourceFieldSelector, mode: int32() },
  { name: 'io.orch.api.core.v1.DownwardAPIVolumeFile', required: ['path'] },
));

/**
 * Turns a decoded JSON value into a Pod, checking the JSON type of every field that the
 * agent and the API server read (strings, integers, booleans, lists, maps), as upstream's
 * typed decoding does. Fields outside the table are kept as they are, unchecked. `null`
 * means "not set" and is dropped, and a quantity written as a number (`cpu: 1`) becomes
 * its text ("1"), as Kubernetes reads it. Values (names, ranges) are checked later by
 * validatePod.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { quoteValue } from '../quote.js';

type Scalar = 'string' | 'int' | 'bool' | 'quantity' | 'int-or-string' | 'object';
type Shape = Scalar | { readonly list: Shape } | { readonly map: Shape } | { readonly fields: Fields };
type Fields = Readonly<Record<string, Shape>>;

const strings: Shape = { list: 'string' };
const stringMap: Shape = { map: 'string' };
const quantities: Shape = { map: 'quantity' };
const objects: Shape = { list: 'object' };
const fieldRef: Shape = { fields: { apiVersion: 'string', fieldPath: 'string' } };
const resourceFieldRef: Shape = { fields: { containerName: 'string', resource: 'string', divisor: 'quantity' } };
const keyRef: Shape = { fields: { name: 'string', key: 'string', optional: 'bool' } };
const httpGet: Shape = {
  fields: { host: 'string', path: 'string', port: 'int-or-string', scheme: 'string', httpHeaders: { list: { fields: { name: 'string', value: 'string' } } } },
};
const tcpSocket: Shape = { fields: { host: 'string', port: 'int-or-string' } };
const exec: Shape = { fields: { command: strings } };
const handler: Shape = { fields: { exec, httpGet, tcpSocket, sleep: { fields: { seconds: 'int' } } } };
const probe: Shape = {
  fields: {
    exec, httpGet, tcpSocket, grpc: { fields: { port: 'int', service: 'string' } },
    initialDelaySeconds: 'int', timeoutSeconds: 'int', periodSeconds: 'int', successThreshold: 'int', failureThreshold: 'int',
    terminationGracePeriodSeconds: 'int',
  },
};
const container: Shape = {
  fields: {
    name: 'string', image: 'string', command: strings, args: strings, workingDir: 'string',
    ports: { list: { fields: { containerPort: 'int', hostPort: 'int', hostIP: 'string', name: 'string', protocol: 'string' } } },
    envFrom: objects,
    env: {
      list: {
        fields: {
          name: 'string', value: 'string',
          valueFrom: { fields: { fieldRef, resourceFieldRef, configMapKeyRef: keyRef, secretKeyRef: keyRef } },
        },
      },
    },
    resources: { fields: { limits: quantities, requests: quantities, claims: objects } },
    restartPolicy: 'string',
    volumeMounts: {
      list: {
        fields: {
          name: 'string', mountPath: 'string', subPath: 'string', subPathExpr: 'string', readOnly: 'bool',
          mountPropagation: 'string', recursiveReadOnly: 'string',
        },
      },
    },
    livenessProbe: probe, readinessProbe: probe, startupProbe: probe,
    lifecycle: { fields: { postStart: handler, preStop: handler } },
    terminationMessagePath: 'string', terminationMessagePolicy: 'string', imagePullPolicy: 'string',
    securityContext: 'object', stdin: 'bool', stdinOnce: 'bool', tty: 'bool', targetContainerName: 'string',
  },
};
const claimSpec: Shape = {
  fields: {
    accessModes: strings, selector: 'object', resources: { fields: { limits: quantities, requests: quantities } }, volumeName: 'string',
    storageClassName: 'string', volumeMode: 'string', dataSource: 'object', dataSourceRef: 'object', volumeAttributesClassName: 'string',
  },
};
const keyToPaths: Shape = { list: { fields: { key: 'string', path: 'string', mode: 'int' } } };
const downwardItems: Shape = { list: { fields: { path: 'string', fieldRef, resourceFieldRef, mode: 'int' } } };
const volume: Shape = {
  fields: {
    name: 'string',
    hostPath: { fields: { path: 'string', type: 'string' } },
    emptyDir: { fields: { medium: 'string', sizeLimit: 'quantity' } },
    secret: { fields: { secretName: 'string', defaultMode: 'int', items: keyToPaths, optional: 'bool' } },
    configMap: { fields: { name: 'string', defaultMode: 'int', items: keyToPaths, optional: 'bool' } },
    downwardAPI: { fields: { defaultMode: 'int', items: downwardItems } },
    projected: { fields: { defaultMode: 'int', sources: objects } },
    persistentVolumeClaim: { fields: { claimName: 'string', readOnly: 'bool' } },
    csi: { fields: { driver: 'string', readOnly: 'bool', fsType: 'string', volumeAttributes: stringMap, nodePublishSecretRef: { fields: { name: 'string' } } } },
    flexVolume: { fields: { driver: 'string', fsType: 'string', secretRef: { fields: { name: 'string' } }, readOnly: 'bool', options: stringMap } },
    ephemeral: { fields: { volumeClaimTemplate: { fields: { metadata: 'object', spec: claimSpec } } } },
  },
};
const podShape: Shape = {
  fields: {
    apiVersion: 'string',
    kind: 'string',
    metadata: {
      fields: {
        name: 'string', generateName: 'string', namespace: 'string', uid: 'string', resourceVersion: 'string',
        generation: 'int', deletionTimestamp: 'string', deletionGracePeriodSeconds: 'int',
        labels: stringMap, annotations: stringMap, ownerReferences: objects, finalizers: strings,
      },
    },
    spec: {
      fields: {
        containers: { list: container }, initContainers: { list: container }, ephemeralContainers: { list: container },
        volumes: { list: volume },
        restartPolicy: 'string', terminationGracePeriodSeconds: 'int', activeDeadlineSeconds: 'int', dnsPolicy: 'string',
        nodeSelector: stringMap, serviceAccountName: 'string', serviceAccount: 'string', automountServiceAccountToken: 'bool',
        nodeName: 'string', hostNetwork: 'bool', hostPID: 'bool', hostIPC: 'bool', shareProcessNamespace: 'bool',
        securityContext: 'object', imagePullSecrets: objects, hostname: 'string', subdomain: 'string', affinity: 'object',
        schedulerName: 'string', priorityClassName: 'string', priority: 'int', runtimeClassName: 'string',
        tolerations: { list: { fields: { key: 'string', operator: 'string', value: 'string', effect: 'string', tolerationSeconds: 'int' } } },
        dnsConfig: { fields: { nameservers: strings, searches: strings, options: { list: { fields: { name: 'string', value: 'string' } } } } },
        enableServiceLinks: 'bool', preemptionPolicy: 'string', overhead: quantities, setHostnameAsFQDN: 'bool', hostUsers: 'bool',
      },
    },
    status: 'object',
  },
};

export type PodDecodeResult = { readonly ok: true; readonly pod: Pod } | { readonly ok: false; readonly problems: readonly string[] };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${quoteValue(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'boolean') return `the boolean ${value}`;
  return typeof value;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

const EXPECTED: Readonly<Record<Scalar, string>> = {
  string: 'a string',
  int: 'an integer',
  bool: 'a boolean (true or false)',
  quantity: 'a quantity (a string such as "100m" or "64Mi", or a number)',
  'int-or-string': 'an integer or a string',
  object: 'an object',
};

function checkScalar(value: unknown, shape: Scalar): { ok: boolean; value: unknown } {
  switch (shape) {
    case 'string':
      return { ok: typeof value === 'string', value };
    case 'int':
      return { ok: typeof value === 'number' && Number.isSafeInteger(value), value };
    case 'bool':
      return { ok: typeof value === 'boolean', value };
    case 'quantity':
      if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value: String(value) };
      return { ok: typeof value === 'string', value };
    case 'int-or-string':
      return { ok: typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value)), value };
    case 'object':
      return { ok: isPlainObject(value), value };
  }
}

/** Checks `value` against `shape`; returns the normalized value (problems are added to `out`). */
function check(value: unknown, shape: Shape, path: string, out: string[]): unknown {
  if (typeof shape === 'string') {
    const result = checkScalar(value, shape);
    if (!result.ok) out.push(`${path}: must be ${EXPECTED[shape]}, not ${describe(value)}`);
    return result.value;
  }
  if ('list' in shape) {
    if (!Array.isArray(value)) {
      out.push(`${path}: must be a list, not ${describe(value)}`);
      return value;
    }
    return value.map((item: unknown, i) => check(item, shape.list, `${path}[${i}]`, out));
  }
  if (!isPlainObject(value)) {
    out.push(`${path}: must be an object, not ${describe(value)}`);
    return value;
  }
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if ('map' in shape) {
      result[key] = check(item, shape.map, `${path}[${key}]`, out);
      continue;
    }
    const fieldShape = shape.fields[key];
    if (item === null && fieldShape !== undefined) continue; // null means "not set"
    result[key] = fieldShape === undefined ? item : check(item, fieldShape, join(path, key), out);
  }
  return result;
}

/**
 * Reads a decoded JSON value (JSON.parse or a YAML document's toJS) as a Pod. `path`
 * prefixes each problem's field path (e.g. `items[2]`). Never throws.
 */
export function decodePod(value: unknown, path = ''): PodDecodeResult {
  const problems: string[] = [];
  if (!isPlainObject(value)) {
    return { ok: false, problems: [`${path === '' ? '(pod)' : path}: must be an object, not ${describe(value)}`] };
  }
  const pod = check(value, podShape, path, problems) as Pod;
  return problems.length === 0 ? { ok: true, pod } : { ok: false, problems };
}

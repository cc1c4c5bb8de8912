/**
 * The ConfigMaps and Secrets a container's environment reads (upstream: the configMap and secret
 * managers as makeEnvironmentVariables calls them): `env[].valueFrom.configMapKeyRef`,
 * `secretKeyRef` and `envFrom[].configMapRef`, `secretRef`. They are read once per container
 * start, before the (pure) environment is built from them, through the source the agent injects
 * (its object manager in API-server mode). An agent without one (standalone) cannot read them:
 * such a container fails with an error naming the pod, the container and the reference, as
 * upstream's agent without a client does.
 *
 * The keys of an envFrom source that are not valid variable names (after the prefix) are skipped
 * and reported, as upstream's InvalidEnvironmentVariableNames event.
 */
import { Buffer } from 'node:buffer';
import type { ConfigMap, Container, EphemeralContainer, Secret } from 'kubernetes-types/core/v1.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';

/** A ConfigMap or Secret the environment needs cannot be read: the agent has no API server, or the read failed. */
export const KUBERUNTIME_ENV_SOURCE_UNAVAILABLE = 'KUBERUNTIME_ENV_SOURCE_UNAVAILABLE';
/** A ConfigMap, Secret or key the environment names does not exist (and is not optional). */
export const KUBERUNTIME_ENV_REFERENCE_NOT_FOUND = 'KUBERUNTIME_ENV_REFERENCE_NOT_FOUND';

/** Where the environment reads its objects. Resolves undefined when the object does not exist; rejects on any other failure. */
export interface EnvObjectSource {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
}

/** The objects one container's environment names, read for one start: by name, undefined when it does not exist. */
export interface EnvObjects {
  readonly configMaps: ReadonlyMap<string, ConfigMap | undefined>;
  readonly secrets: ReadonlyMap<string, Secret | undefined>;
}

export const NO_ENV_OBJECTS: EnvObjects = { configMaps: new Map(), secrets: new Map() };

type Kind = 'ConfigMap' | 'Secret';

/** One place of the container that names an object. */
interface Reference {
  readonly kind: Kind;
  readonly name: string;
  /** `env FOO: configMapKeyRef "cfg" (key "k")`, `envFrom[0]: secretRef "s"`. */
  readonly where: string;
}

/** Upstream's IsEnvVarName. */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function isEnvVarName(name: string): boolean {
  return ENV_NAME.test(name);
}

function referencesOf(container: Container | EphemeralContainer): Reference[] {
  const refs: Reference[] = [];
  for (const env of container.env ?? []) {
    const cm = env.valueFrom?.configMapKeyRef;
    const secret = env.valueFrom?.secretKeyRef;
    if (cm !== undefined) refs.push({ kind: 'ConfigMap', name: cm.name ?? '', where: `env ${env.name}: configMapKeyRef ${JSON.stringify(cm.name ?? '')} (key ${JSON.stringify(cm.key)})` });
    if (secret !== undefined) refs.push({ kind: 'Secret', name: secret.name ?? '', where: `env ${env.name}: secretKeyRef ${JSON.stringify(secret.name ?? '')} (key ${JSON.stringify(secret.key)})` });
  }
  (container.envFrom ?? []).forEach((from, i) => {
    if (from.configMapRef !== undefined) refs.push({ kind: 'ConfigMap', name: from.configMapRef.name ?? '', where: `envFrom[${i}]: configMapRef ${JSON.stringify(from.configMapRef.name ?? '')}` });
    if (from.secretRef !== undefined) refs.push({ kind: 'Secret', name: from.secretRef.name ?? '', where: `envFrom[${i}]: secretRef ${JSON.stringify(from.secretRef.name ?? '')}` });
  });
  return refs;
}

function podName(pod: NodePod): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/**
 * Reads every ConfigMap and Secret the container's environment names (each once). Throws
 * KUBERUNTIME_ENV_SOURCE_UNAVAILABLE when there is no source (standalone) or a read fails.
 */
export async function readEnvObjects(source: EnvObjectSource | undefined, pod: NodePod, container: Container | EphemeralContainer): Promise<EnvObjects> {
  const refs = referencesOf(container);
  if (refs.length === 0) return NO_ENV_OBJECTS;
  const subject = `pod ${podName(pod)} container ${container.name}`;
  if (source === undefined) {
    const [first] = refs;
    throw new OrchError(
      KUBERUNTIME_ENV_SOURCE_UNAVAILABLE,
      'invalid',
      `container ${JSON.stringify(container.name)} of pod ${podName(pod)}: ${first?.where ?? ''} names a ${first?.kind ?? ''} of the API server, and this agent runs without one (--orchconfig): ConfigMaps and Secrets cannot be read`,
      { subject },
    );
  }
  const namespace = pod.metadata.namespace;
  const configMaps = new Map<string, ConfigMap | undefined>();
  const secrets = new Map<string, Secret | undefined>();
  const wanted = new Map<string, Reference>();
  for (const ref of refs) wanted.set(`${ref.kind}/${ref.name}`, ref);
  await Promise.all([...wanted.values()].map(async (ref) => {
    try {
      if (ref.kind === 'ConfigMap') configMaps.set(ref.name, await source.configMap(namespace, ref.name));
      else secrets.set(ref.name, await source.secret(namespace, ref.name));
    } catch (err) {
      throw new OrchError(KUBERUNTIME_ENV_SOURCE_UNAVAILABLE, 'unavailable', `cannot read ${ref.kind} ${namespace}/${ref.name} (${ref.where}): ${messageOf(err)}`, {
        subject, cause: err,
      });
    }
  }));
  return { configMaps, secrets };
}

/** The key → value pairs of an object as the environment reads them (a Secret's data decoded from base64). */
export function envData(object: ConfigMap | Secret, kind: Kind): Map<string, string> {
  const data = (object.data ?? {}) as Readonly<Record<string, string>>;
  return new Map(Object.entries(data).map(([k, v]) => [k, kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v]));
}

/**
 * The warnings of upstream's InvalidEnvironmentVariableNames events for the container's envFrom
 * sources: the keys (with the prefix) that are not variable names, sorted, per source.
 */
export function invalidEnvFromKeys(pod: NodePod, container: Container | EphemeralContainer, objects: EnvObjects): string[] {
  const messages: string[] = [];
  for (const from of container.envFrom ?? []) {
    const kind: Kind = from.configMapRef !== undefined ? 'ConfigMap' : 'Secret';
    const name = (from.configMapRef ?? from.secretRef)?.name ?? '';
    const object = kind === 'ConfigMap' ? objects.configMaps.get(name) : objects.secrets.get(name);
    if (object === undefined) continue;
    const invalid = [...envData(object, kind).keys()].map((k) => `${from.prefix ?? ''}${k}`).filter((k) => !isEnvVarName(k)).sort();
    if (invalid.length === 0) continue;
    messages.push(`Keys [${invalid.join(', ')}] from the EnvFrom ${kind === 'ConfigMap' ? 'configMap' : 'secret'} ${pod.metadata.namespace}/${name} were skipped since they are considered invalid environment variable names.`);
  }
  return messages;
}

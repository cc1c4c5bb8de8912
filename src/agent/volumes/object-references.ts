/**
 * The ConfigMaps and Secrets a pod names (upstream: the getReferencedObjects of the configMap
 * and secret managers): its configMap and secret volumes and projected sources, its containers'
 * env (configMapKeyRef, secretKeyRef) and envFrom, init and ephemeral containers included, and,
 * for Secrets, its imagePullSecrets and its flexVolume volumes' secretRef. The object manager keeps exactly these watched or cached
 * while the pod is registered.
 */
import type { Container, EphemeralContainer, Pod } from 'kubernetes-types/core/v1.js';

export type ObjectKind = 'configMap' | 'secret';

export interface PodReferences {
  readonly configMap: ReadonlySet<string>;
  readonly secret: ReadonlySet<string>;
}

function containersOf(pod: Pod): (Container | EphemeralContainer)[] {
  const spec = pod.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

/** The names of the ConfigMaps and Secrets the pod refers to (empty names left out). */
export function podReferences(pod: Pod): PodReferences {
  const configMap = new Set<string>();
  const secret = new Set<string>();
  const add = (set: Set<string>, name: string | undefined): void => {
    if (name !== undefined && name !== '') set.add(name);
  };
  for (const volume of pod.spec?.volumes ?? []) {
    add(configMap, volume.configMap?.name);
    add(secret, volume.secret?.secretName);
    add(secret, volume.flexVolume?.secretRef?.name);
    for (const source of volume.projected?.sources ?? []) {
      add(configMap, source.configMap?.name);
      add(secret, source.secret?.name);
    }
  }
  for (const c of containersOf(pod)) {
    for (const env of c.env ?? []) {
      add(configMap, env.valueFrom?.configMapKeyRef?.name);
      add(secret, env.valueFrom?.secretKeyRef?.name);
    }
    for (const from of c.envFrom ?? []) {
      add(configMap, from.configMapRef?.name);
      add(secret, from.secretRef?.name);
    }
  }
  for (const ref of pod.spec?.imagePullSecrets ?? []) add(secret, ref.name);
  return { configMap, secret };
}

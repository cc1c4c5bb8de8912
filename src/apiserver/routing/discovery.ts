/**
 * Discovery documents in the upstream shapes, built from the resource definitions: `/api`
 * (APIVersions), `/api/v1` and `/apis/<group>/<version>` (APIResourceList), `/apis`
 * (APIGroupList), `/apis/<group>` (APIGroup), and the aggregated form
 * (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) of `/api` and `/apis` that kubectl asks for first.
 */
import type { ResourceDefinition } from '../registry/index.js';

export interface GroupVersions {
  readonly group: string;
  readonly versions: readonly string[];
}

/** The groups (core first, then in registration order) and their versions. */
export function groupsOf(defs: readonly ResourceDefinition[]): GroupVersions[] {
  const out: { group: string; versions: string[] }[] = [];
  for (const def of defs) {
    let entry = out.find((g) => g.group === def.group);
    if (entry === undefined) {
      entry = { group: def.group, versions: [] };
      out.push(entry);
    }
    if (!entry.versions.includes(def.version)) entry.versions.push(def.version);
  }
  return out.sort((a, b) => (a.group === '' ? -1 : b.group === '' ? 1 : 0));
}

function resourcesOf(defs: readonly ResourceDefinition[], group: string, version: string): ResourceDefinition[] {
  return defs.filter((d) => d.group === group && d.version === version);
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** The APIResourceList of one group version, or undefined when it is not served. */
export function apiResourceList(defs: readonly ResourceDefinition[], group: string, version: string): Record<string, unknown> | undefined {
  const list = resourcesOf(defs, group, version);
  if (list.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const d of list) {
    resources.push({
      name: d.plural,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: [...d.verbs].sort(),
      ...(d.shortNames.length === 0 ? {} : { shortNames: [...d.shortNames] }),
      ...(d.categories.length === 0 ? {} : { categories: [...d.categories] }),
    });
    for (const sub of subresourcesOf(d)) {
      resources.push({
        name: `${d.plural}/${sub.name}`, singularName: '', namespaced: d.namespaced,
        ...(sub.group === undefined ? {} : { group: sub.group }), ...(sub.version === undefined ? {} : { version: sub.version }),
        kind: sub.kind, verbs: [...sub.verbs].sort(),
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}

function apiGroupOf(g: GroupVersions): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.group}/${v}`, version: v }));
  return { name: g.group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(defs: readonly ResourceDefinition[]): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groupsOf(defs).filter((g) => g.group !== '').map(apiGroupOf) };
}

export function apiGroup(defs: readonly ResourceDefinition[], group: string): Record<string, unknown> | undefined {
  const g = groupsOf(defs).find((x) => x.group === group && group !== '');
  return g === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroupOf(g) };
}

/** The status subresource (when served) and the definition's others. */
function subresourcesOf(d: ResourceDefinition): { name: string; kind: string; group?: string; version?: string; verbs: readonly string[] }[] {
  return [...(d.statusSubresource ? [{ name: 'status', kind: d.kind, verbs: ['get', 'patch', 'update'] }] : []), ...(d.subresources ?? [])];
}

function discoveryResource(d: ResourceDefinition): Record<string, unknown> {
  const responseKind = { group: d.group, version: d.version, kind: d.kind };
  return {
    resource: d.plural,
    responseKind,
    scope: d.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: d.singular,
    verbs: [...d.verbs].sort(),
    ...(d.shortNames.length === 0 ? {} : { shortNames: [...d.shortNames] }),
    ...(d.categories.length === 0 ? {} : { categories: [...d.categories] }),
    ...(subresourcesOf(d).length === 0 ? {} : {
      subresources: subresourcesOf(d).map((s) => ({
        subresource: s.name,
        responseKind: { group: s.group ?? d.group, version: s.version ?? d.version, kind: s.kind },
        verbs: [...s.verbs].sort(),
      })),
    }),
  };
}

/** Aggregated discovery: `core` true for `/api` (the core group), false for `/apis`. */
export function aggregatedDiscovery(defs: readonly ResourceDefinition[], core: boolean): Record<string, unknown> {
  const items = groupsOf(defs)
    .filter((g) => (g.group === '') === core)
    .map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((v) => ({ version: v, resources: resourcesOf(defs, g.group, v).map(discoveryResource), freshness: 'Current' })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}

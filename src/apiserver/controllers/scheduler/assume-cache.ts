/**
 * Upstream's AssumeCache for volumes and claims: an informer's objects, overlaid with the
 * versions the scheduler assumed for pods it is binding (a volume's claimRef, a claim's
 * selected node) until the informer delivers a newer version of that object (the write seen) or
 * the assumption is dropped (the binding failed). Later scheduling decisions see the assumed
 * versions, so that two pods are never given the same volume.
 */
import { nameOf, namespaceOf, resourceVersionOf, type WireObject } from '../../registry/index.js';
import type { Informer } from '../client/index.js';

function revision(o: WireObject): bigint {
  const rv = resourceVersionOf(o);
  return /^\d+$/.test(rv) ? BigInt(rv) : 0n;
}

export class AssumeCache {
  private readonly informer: Informer;
  private readonly assumed = new Map<string, { object: WireObject; base: bigint }>();

  constructor(informer: Informer) {
    this.informer = informer;
    const seen = (o: WireObject): void => {
      const key = `${namespaceOf(o)}/${nameOf(o)}`;
      const a = this.assumed.get(key);
      if (a !== undefined && revision(o) > a.base) this.assumed.delete(key);
    };
    informer.addHandler({ updated: (_old, o) => { seen(o); }, deleted: (o) => { this.assumed.delete(`${namespaceOf(o)}/${nameOf(o)}`); } });
  }

  get(namespace: string, name: string): WireObject | undefined {
    return this.assumed.get(`${namespace}/${name}`)?.object ?? this.informer.get(namespace, name);
  }

  list(): WireObject[] {
    return this.informer.list().map((o) => this.assumed.get(`${namespaceOf(o)}/${nameOf(o)}`)?.object ?? o);
  }

  /** Assumes `object` (a changed copy of the informer's version, with its resourceVersion). */
  assume(object: WireObject): void {
    this.assumed.set(`${namespaceOf(object)}/${nameOf(object)}`, { object, base: revision(object) });
  }

  /** Drops the assumption of an object (back to the informer's version). */
  restore(namespace: string, name: string): void {
    this.assumed.delete(`${namespace}/${name}`);
  }
}

/**
 * The ResourceClient of one registry, in process: list and watch through listObjects and
 * watchObjects, writes through the registry's create, update and delete, so that every write of
 * a control loop passes the resource's validation as a client's would. The loops act as the user
 * `system:orch-controllers` (group system:masters), recorded in managedFields as
 * `orch-controller-manager`.
 */
import type { Clock } from '../../../api/clock.js';
import { parseFieldSelector, parseLabelSelector } from '../../selectors/index.js';
import { listObjects, watchObjects, type ResourceRegistry, type StrategyContext, type WireObject } from '../../registry/index.js';
import type { ClientWatch, DeleteOptions, ObjectList, ResourceClient } from './types.js';
import type { ObjectEvent } from '../../registry/index.js';

export const CONTROLLERS_USER: StrategyContext['user'] = { name: 'system:orch-controllers', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** The manager the control loops' writes are recorded under in managedFields (upstream: kube-controller-manager). */
export const CONTROLLERS_FIELD_MANAGER = 'orch-controller-manager';

export interface RegistryClientOptions {
  readonly registry: ResourceRegistry;
  /** The namespace list and watch cover ('' for all, and for cluster-scoped resources). */
  readonly namespace?: string;
  readonly clock: Clock;
}

export function registryClient(options: RegistryClientOptions): ResourceClient {
  const { registry, clock } = options;
  const scope = options.namespace ?? '';
  const ctx = (): StrategyContext => ({ user: CONTROLLERS_USER, now: new Date(clock.now()) });
  const everything = { labelSelector: parseLabelSelector(''), fieldSelector: parseFieldSelector('', [], registry.def.plural) };
  return {
    async list(): Promise<ObjectList> {
      const page = await listObjects(registry, { namespace: scope, ...everything });
      return { items: page.items, resourceVersion: page.resourceVersion };
    },
    async watch(resourceVersion: string, onEvent: (event: ObjectEvent) => void): Promise<ClientWatch> {
      const watch = await watchObjects(registry, scope, { resourceVersion, onEvent });
      return { close: () => watch.close() };
    },
    get: (namespace, name) => registry.get(namespace, name),
    create: (namespace, object) => registry.create(ctx(), namespace, object, { dryRun: false, fieldManager: CONTROLLERS_FIELD_MANAGER }),
    async update(namespace: string, name: string, object: WireObject, subresource?: 'status'): Promise<WireObject> {
      const options = { dryRun: false, fieldManager: CONTROLLERS_FIELD_MANAGER, ...(subresource === undefined ? {} : { subresource }) };
      const result = await registry.update(ctx(), namespace, name, object, options);
      return result.object;
    },
    async delete(namespace: string, name: string, deletion: DeleteOptions = {}): Promise<void> {
      await registry.delete(ctx(), namespace, name, {
        dryRun: false,
        ...(deletion.uid === undefined ? {} : { uid: deletion.uid }),
        ...(deletion.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: deletion.gracePeriodSeconds }),
      });
    },
  };
}

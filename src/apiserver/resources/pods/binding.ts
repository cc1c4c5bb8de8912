/**
 * The pods/binding subresource (upstream's BindingREST): a POST of a Binding
 * `{metadata: {name}, target: {kind: Node, name: <node>}}` assigns an unbound pod to a node. It
 * sets `spec.nodeName`, adds the binding's annotations and sets the PodScheduled condition True,
 * in one compare-and-swap on the stored pod. Refused (409 Conflict on pods/binding) for a pod
 * already assigned, being deleted, or still carrying scheduling gates; a uid or resourceVersion
 * in the binding's metadata is a precondition. Answered 201 with a Success Status.
 */
import { cloneJson } from '../../patch/index.js';
import { metaOf, nameOf, resourceVersionOf, str, type ResourceRegistry, type StrategyContext, type SubresourceDefinition, type WireObject } from '../../registry/index.js';
import { object, objectMeta, objectReference, str as strSchema, type ObjectSchema } from '../../schema/index.js';
import { badRequest, conflict, FieldErrors, type Status } from '../../status/index.js';
import { rec, recs } from '../common/index.js';
import { setPodCondition } from './conditions.js';
import { quoteValue } from '../../../api/quote.js';

const BINDING = { group: '', resource: 'pods/binding' };

export const bindingSchema: ObjectSchema = object(
  {
    kind: strSchema('Kind of the object: Binding.'),
    apiVersion: strSchema('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    target: objectReference,
  },
  {
    name: 'io.orch.api.core.v1.Binding',
    gvk: [{ group: '', version: 'v1', kind: 'Binding' }],
    description: 'Binding ties a pod to a node (the scheduler\'s decision).',
    required: ['target'],
  },
);

/** What the merge rule receives from bindPod: the pod's new node, annotations and PodScheduled condition. */
interface Assignment {
  readonly metadata: { name: string; uid?: string; resourceVersion?: string; annotations?: Record<string, string> };
  readonly spec: { nodeName: string };
  readonly status: { conditions: WireObject[] };
}

/** The stored pod with the assignment applied, or a 409 when the pod cannot be assigned. */
function assign(written: WireObject, stored: WireObject): WireObject {
  const name = nameOf(stored);
  const spec = rec(stored.spec);
  const uid = str(metaOf(written).uid);
  const storedUid = str(metaOf(stored).uid);
  if (uid !== '' && uid !== storedUid) throw conflict(BINDING, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${storedUid}`);
  if (str(metaOf(stored).deletionTimestamp) !== '') throw conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  if (str(spec.nodeName) !== '') throw conflict(BINDING, name, `pod ${name} is already assigned to node ${quoteValue(str(spec.nodeName))}`);
  if (recs(spec.schedulingGates).length > 0) throw conflict(BINDING, name, `pod ${name} has non-empty .spec.schedulingGates`);
  const pod = cloneJson(stored);
  rec(pod.spec).nodeName = rec(written.spec).nodeName;
  const annotations = rec(metaOf(written).annotations);
  if (Object.keys(annotations).length > 0) metaOf(pod).annotations = { ...rec(metaOf(pod).annotations), ...annotations };
  const condition = recs(rec(written.status).conditions)[0];
  if (condition !== undefined) {
    const status = rec(pod.status);
    pod.status = status;
    status.conditions = [...recs(status.conditions).filter((c) => c.type !== condition.type), condition];
  }
  return pod;
}

/** The subresource as discovery shows it and the registry writes it (create only; served by the binding action). */
/** A binding owns no field: upstream records no manager for pods/binding. */
export const bindingSubresource: SubresourceDefinition = { name: 'binding', kind: 'Binding', verbs: ['create'], merge: assign, fields: [] };

/** The problems of a Binding body for the pod `name` (upstream ValidatePodBinding), as a 400 or a 422. */
export function validateBinding(binding: WireObject, name: string): void {
  const bindingName = nameOf(binding);
  if (bindingName !== name) throw badRequest('name in URL does not match name in Binding object');
  const target = rec(binding.target);
  const errors = new FieldErrors();
  const kind = str(target.kind);
  if (kind !== '' && kind !== 'Node') errors.notSupported('target.kind', kind, ['Node', '<empty>']);
  if (str(target.name) === '') errors.required('target.name');
  errors.throwIfAny('Binding', '', name);
}

export interface BindRequest {
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  /** Preconditions on the pod. */
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * Binds the pod through the pods registry (the pod's own validation of subresource writes runs).
 * Throws StatusError: 404 for a missing pod, 409 when it cannot be assigned or a precondition fails.
 */
export async function bindPod(pods: ResourceRegistry, ctx: StrategyContext, request: BindRequest, dryRun: boolean): Promise<WireObject> {
  const assignment: Assignment = {
    metadata: {
      name: request.name,
      ...(request.uid === undefined || request.uid === '' ? {} : { uid: request.uid }),
      ...(request.resourceVersion === undefined || request.resourceVersion === '' ? {} : { resourceVersion: request.resourceVersion }),
      ...(request.annotations === undefined ? {} : { annotations: { ...request.annotations } }),
    },
    spec: { nodeName: request.node },
    status: { conditions: [] },
  };
  const carrier = assignment as unknown as WireObject;
  // The condition as upstream's UpdatePodCondition sets it (its transition time kept when it was True already).
  setPodCondition(carrier, { type: 'PodScheduled', status: 'True' }, ctx.now.getTime());
  const result = await pods.update(ctx, request.namespace, request.name, carrier, { dryRun, subresource: 'binding' });
  return result.object;
}

/** Binds as the binding subresource's POST does; answers the Success Status (201). */
export async function bindFromBody(pods: ResourceRegistry, ctx: StrategyContext, namespace: string, name: string, binding: WireObject, dryRun: boolean): Promise<Status> {
  validateBinding(binding, name);
  const meta = metaOf(binding);
  await bindPod(pods, ctx, {
    namespace, name, node: str(rec(binding.target).name),
    uid: str(meta.uid), resourceVersion: resourceVersionOf(binding),
    annotations: Object.fromEntries(Object.entries(rec(meta.annotations)).map(([k, v]) => [k, str(v)])),
  }, dryRun);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}

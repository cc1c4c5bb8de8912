/** Schemas shared by every kind: object metadata, references, options bodies. */
import { any, array, bool, int64, object, str, stringMap, time, type ObjectSchema } from './types.js';

export const ownerReference = object(
  {
    apiVersion: str('API version of the referent.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
    controller: bool('If true, this reference points to the managing controller.'),
    blockOwnerDeletion: bool('If true, the owner cannot be deleted before this object is gone (foreground deletion).'),
  },
  { name: 'io.orch.apimachinery.meta.v1.OwnerReference', required: ['apiVersion', 'kind', 'name', 'uid'], mapType: 'atomic' },
);

/** One entry of metadata.managedFields: who owns which fields, written by the server on every write. */
export const managedFieldsEntry = object(
  {
    manager: str('The name of the workflow managing these fields (fieldManager, or the User-Agent\'s first segment).'),
    operation: str('Apply or Update.', { enum: ['Apply', 'Update'] }),
    apiVersion: str('The API version of the object the fields were set in.'),
    time: time('When the manager last changed one of its fields.'),
    fieldsType: str('The format of fieldsV1: always FieldsV1.'),
    fieldsV1: any('The set of fields: f:<name>, k:<keys>, v:<value>, i:<index>, "." for the node itself.'),
    subresource: str('The subresource written (status), empty for the object itself.'),
  },
  { name: 'io.orch.apimachinery.meta.v1.ManagedFieldsEntry' },
);

export const objectMeta = object(
  {
    name: str('Name, unique within a namespace; cannot be updated.'),
    generateName: str('Prefix of a server-generated name, used when name is empty.'),
    namespace: str('Namespace of a namespaced object; set from the request path.'),
    uid: str('Unique identifier set by the server on creation.'),
    resourceVersion: str('Opaque version of the object, for optimistic concurrency and watches.'),
    generation: int64('Sequence number of a specific generation of the desired state.'),
    creationTimestamp: time('Time the object was created (set by the server).'),
    deletionTimestamp: time('Time after which the object will be deleted; set when deletion was requested and finalizers remain.'),
    deletionGracePeriodSeconds: int64('Seconds allowed for graceful termination before removal.'),
    labels: stringMap('Map of string keys and values to organize and select objects.'),
    annotations: stringMap('Unstructured key-value map stored with the object.'),
    ownerReferences: array(ownerReference, { mergeKey: 'uid', patchStrategy: 'merge', description: 'Objects this object depends on.' }),
    finalizers: array(str(), { patchStrategy: 'merge', listType: 'set', description: 'Must be empty before the object is deleted from the registry.' }),
    managedFields: array(managedFieldsEntry, { listType: 'atomic', description: 'Field ownership, maintained by the server on every write (server-side apply).' }),
    selfLink: str('Deprecated; never set.'),
  },
  { name: 'io.orch.apimachinery.meta.v1.ObjectMeta' },
);

export const listMeta = object(
  {
    resourceVersion: str('The revision the list was read at.'),
    continue: str('Token of the next page, when more items follow.'),
    remainingItemCount: int64('Number of items after this page, when known.'),
    selfLink: str('Deprecated; never set.'),
  },
  { name: 'io.orch.apimachinery.meta.v1.ListMeta' },
);

export const objectReference = object(
  {
    kind: str('Kind of the referent.'),
    namespace: str('Namespace of the referent.'),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
    apiVersion: str('API version of the referent.'),
    resourceVersion: str('Specific resourceVersion this reference is made to.'),
    fieldPath: str('A piece of an object instead of the whole, e.g. spec.containers{name}.'),
  },
  { name: 'io.orch.api.core.v1.ObjectReference', mapType: 'atomic' },
);

/** DeleteOptions bodies (kind DeleteOptions, apiVersion v1 or meta.k8s.io/v1). */
export const deleteOptions: ObjectSchema = object({
  kind: str(),
  apiVersion: str(),
  gracePeriodSeconds: int64(),
  preconditions: object({ uid: str(), resourceVersion: str() }),
  orphanDependents: bool(),
  propagationPolicy: str(undefined, { enum: ['Orphan', 'Background', 'Foreground'] }),
  dryRun: array(str()),
});

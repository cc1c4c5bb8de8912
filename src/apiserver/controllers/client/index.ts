/**
 * controllers/client: how the control loops see the cluster. A ResourceClient per resource over
 * the registry (list and watch in the wire form; create, update, delete through the registry's
 * validation), informers that keep a resource in memory from a list and a watch, the event
 * recorder (events.orch.io/v1 with series), the read-change-write helper for objects others
 * write too, and the work queue of object keys the loops process one at a time. testing.ts holds the in-memory fakes of the unit tests.
 *
 * Must not: touch the store, or know what any loop does.
 */
export type { ClientWatch, DeleteOptions, Log, ObjectEvent, ObjectList, ResourceClient, WireObject } from './types.js';
export { registryClient, CONTROLLERS_FIELD_MANAGER, CONTROLLERS_USER, type RegistryClientOptions } from './registry-client.js';
export { Informer, objectKey, type InformerHandler, type InformerOptions } from './informer.js';
export { ClientEventRecorder, type ClientEventRecorderOptions, type EventRecorder, type EventType } from './events.js';
export { updateObject, type UpdateOptions } from './update.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';

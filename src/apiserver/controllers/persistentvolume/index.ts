/**
 * controllers/persistentvolume: persistentvolume-binder-controller (upstream's PV controller):
 * binds claims to volumes (access modes, capacity, class, selector, volume mode; the smallest
 * that fits), honours volumes and claims bound by their creator, leaves claims of
 * WaitForFirstConsumer classes to the scheduler, annotates claims for external provisioners,
 * sets the phases of both, marks claims Lost when their volume goes and applies the reclaim
 * policy of released volumes; and the volume matching the scheduler's volume binding shares.
 *
 * Must not: touch the store, mount anything, or decide where pods run.
 */
export { PersistentVolumeController, type PersistentVolumeControllerOptions } from './controller.js';
export { findBestMatchForClaim, findMatchingVolume, type MatchOptions } from './matching.js';
export { isDelayBinding } from './sync.js';
export { claimReference } from './writer.js';

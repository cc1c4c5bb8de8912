/**
 * controllers/ephemeral: ephemeral-volume-controller: the claims of pods' generic ephemeral
 * volumes (`<pod>-<volume>`, owned by the pod), and their removal once the pod is gone (the
 * garbage collector's part for these claims, as this server has none).
 *
 * Must not: touch the store, or bind claims (the PV controller and the scheduler do).
 */
export { EphemeralVolumeController, type EphemeralVolumeOptions } from './controller.js';

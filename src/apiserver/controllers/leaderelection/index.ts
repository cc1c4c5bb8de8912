/**
 * controllers/leaderelection: one leader among the API server replicas that share a store, by a
 * coordination.orch.io Lease (upstream's client-go leader election with a Lease lock: lease
 * duration 15 s, renew deadline 10 s, retry period 2 s by default). The leader runs the control
 * loops; the others wait, and take over once the leader's Lease is released or expires.
 *
 * Must not: know the loops it guards, or touch the store.
 */
export { LeaderElector, type LeaderCallbacks, type LeaderElectionConfig, type LeaderElectorOptions } from './elector.js';

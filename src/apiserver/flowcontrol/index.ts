/**
 * flowcontrol: API Priority and Fairness (upstream's APIPriorityAndFairness): flow schemas
 * classify each request (user, group, verb, resource, namespace) to a priority level; a level
 * has a share of the server's concurrency (--max-requests-inflight +
 * --max-mutating-requests-inflight) and queues (shuffle-sharded, fair); what is beyond its
 * queues is turned away (429 with Retry-After). The configuration is the FlowSchema and
 * PriorityLevelConfiguration objects of flowcontrol.apiserver.orch.io/v1beta3, created from
 * upstream's suggested configuration at start (docs/apiserver/flow-control.md).
 *
 * Must not: answer HTTP (the router does) or know particular resources beyond its own.
 */
export { FlowControl, type Decision, type FlowControlOptions } from './dispatcher.js';
export type { RequestDigest, PriorityLevel, FlowSchema } from './config.js';
export { createFlowControlMetrics, type FlowControlMetrics } from './metrics.js';
export { FLOWCONTROL_GROUP, FLOWCONTROL_VERSION, suggestedFlowSchemas, suggestedPriorityLevels } from './suggested.js';
export { maxInFlightGate, priorityAndFairnessGate, type GateRequest, type GateResult, type RequestGate } from './gate.js';
export type { Cancellation } from './queueset.js';
export { FlowControlSource, type FlowControlSourceOptions } from './source.js';
export { flowSchemaDefinition, priorityLevelDefinition } from './resources.js';

/**
 * admission: the mutating admission plugins of orch-apiserver that change objects on their way
 * in (upstream's admission chain, for what this server serves). Each is a decorator of a
 * ResourceDefinition: it runs before the definition's own defaults on create.
 *
 * - DefaultTolerationSeconds: pods get tolerations of `node.orch.io/not-ready` and
 *   `node.orch.io/unreachable` (NoExecute) for --default-not-ready-toleration-seconds and
 *   --default-unreachable-toleration-seconds (300 s each) unless they tolerate those taints
 *   already.
 *
 * Must not: validate (the strategies do), know HTTP or the store.
 */
export { withDefaultTolerationSeconds, type DefaultTolerationOptions } from './default-tolerations.js';

/**
 * resources/namespaces: the core v1 Namespace resource and its lifecycle (built-in namespaces,
 * admission of namespaced writes, deletion through phase Terminating).
 *
 * Must not: know HTTP; it reaches other resources only through the registries it is given.
 */
export { namespaceDefinition, NAMESPACE_FINALIZER, NAME_LABEL, phaseOf, specFinalizers } from './definition.js';
export { BUILTIN_NAMESPACES, NamespaceLifecycle, type NamespaceLifecycleOptions } from './lifecycle.js';

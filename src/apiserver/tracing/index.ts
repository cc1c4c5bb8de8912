/**
 * tracing (orch-apiserver): the API server's OpenTelemetry traces, as upstream's kube-apiserver
 * makes them with --tracing-config-file: a server span per request (`KubernetesAPI`, continuing
 * the caller's W3C trace context when it sent one) and a span per storage call beneath it.
 *
 * Owns: reading the TracingConfiguration file, and the request and storage decorators. Must not:
 * start the provider (the composition root does, only when the flag is given) or change what a
 * request or a storage call does.
 */
export { loadTracingConfigFile, parseTracingConfig, TRACING_CONFIG_INVALID, type ApiServerTracingConfig } from './config.js';
export { tracedHandler, tracedStore } from './decorators.js';

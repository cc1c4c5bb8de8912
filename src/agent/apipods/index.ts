/**
 * The agent's pods in API-server mode: the pods bound to this node as a pod source (watched,
 * resumed, re-listed), node-level admission of those pods (resources, host ports, node
 * affinity, node name, NoExecute taints), the status writer (pod statuses to the API server,
 * graceful deletion finished there), and mirror pods for static pods.
 *
 * Owns: the API objects of this node's pods and what the agent writes to them. Must not: run
 * or kill containers (the workers do), compute statuses (the status module does) or decide
 * which pods run (the sync loop does, with these admit handlers).
 */
export { apiAdmitHandlers, type AdmissionNode, fitsHostPorts, fitsResources, matchesNodeAffinity, matchesNodeName, podRequest, toleratesNoExecuteTaints } from './admission.js';
export { createApiPodSource, type ApiPodSource, type ApiPodSourceOptions } from './api-source.js';
export { createMirrorPods, mirrorPodFor, type MirrorPods, type MirrorPodsOptions } from './mirror.js';
export { createStatusWriter, statusPatch, type StatusWriter, type StatusWriterOptions } from './status-writer.js';
export { credentialsFor, imageRegistry, pullCredentials } from './pull-secrets.js';

/**
 * The agent's pod sources and their merger (upstream's pkg/kubelet/config): the manifest
 * path (a file or a directory, watched and re-listed), the manifest URL (polled), and
 * sources that push their own snapshots (the API server's); static pod treatment (defaults,
 * content-hash UID, node-suffixed name, annotations, validation); one stream of typed
 * updates (ADD, UPDATE, REMOVE, RECONCILE) and the readiness of all sources.
 *
 * Owns: reading manifests and turning them into the set of pods each source wants on this
 * node, and telling listeners what changed. Must not: run, stop or sync pods (pod workers),
 * talk to the container runtime, create mirror pods or write to the API server, or decide
 * what to do about orphans (it only says when every source has been heard from).
 */
export { createPodConfig, type PodConfig, type PodConfigOptions } from './pod-config.js';
export { PodMerger, UNKNOWN_SOURCE, type PodMergerOptions } from './merger.js';
export { FileSource, type FileSourceOptions, type WatchDirectory } from './file-source.js';
export { UrlSource, MAX_MANIFEST_BYTES, type UrlSourceOptions } from './url-source.js';
export { decodeManifest, type ManifestOptions, type ManifestResult } from './manifest.js';
export { prepareStaticPod, staticPodUID, type StaticOrigin, type StaticPodContext, type StaticPodResult } from './static.js';
export type { PodOperation, PodUpdate, PodUpdateListener, PodSource, SnapshotSink, SourceLogger } from './types.js';

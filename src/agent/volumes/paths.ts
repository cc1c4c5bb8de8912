/**
 * The on-disk layout of pod data, as upstream's:
 *
 *   <rootDir>/pods/<podUID>/
 *     volumes/orch.io~empty-dir/<volumeName>/   an emptyDir (a tmpfs mount point for medium Memory)
 *     volumes/orch.io~configmap/<volumeName>/   a configMap volume (atomic-writer layout: ..data → ..<timestamp>)
 *     volumes/orch.io~secret/<volumeName>       a secret volume: a link to its directory on the node's tmpfs
 *     volumes/orch.io~projected/<volumeName>    a projected volume: the same (memory-volumes.ts)
 *     volumes/orch.io~downward-api/<volumeName>/ a downwardAPI volume
 *     containers/<containerName>/               per-container files (termination logs)
 *     etc-hosts                                 the pod's /etc/hosts
 */
import { join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import { VOLUME_INVALID } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const EMPTY_DIR_PLUGIN_DIR = 'orch.io~empty-dir';
export const CONFIG_MAP_PLUGIN_DIR = 'orch.io~configmap';
export const SECRET_PLUGIN_DIR = 'orch.io~secret';
export const PROJECTED_PLUGIN_DIR = 'orch.io~projected';
export const DOWNWARD_API_PLUGIN_DIR = 'orch.io~downward-api';

/**
 * Throws `VOLUME_INVALID` unless `name` can be one path component: not empty, not `.` or `..`,
 * no `/` and no NUL. Pod UIDs, volume names and container names pass through here before they
 * become paths, so a bad name can never reach outside the pod directory.
 */
export function checkPathComponent(name: string, what: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new OrchError(VOLUME_INVALID, 'invalid', `${what} ${quoteValue(name)} cannot be used as a directory name`, {
      subject: what,
    });
  }
}

/** The pod's UID, checked to be usable as a directory name. Throws `VOLUME_INVALID`. */
export function podUIDOf(pod: NodePod): string {
  const { uid } = pod.metadata;
  checkPathComponent(uid, 'pod UID');
  return uid;
}

export function podsDir(rootDir: string): string {
  return join(rootDir, 'pods');
}

export function podDir(rootDir: string, podUID: string): string {
  return join(rootDir, 'pods', podUID);
}

export function emptyDirPath(rootDir: string, podUID: string, volumeName: string): string {
  return join(rootDir, 'pods', podUID, 'volumes', EMPTY_DIR_PLUGIN_DIR, volumeName);
}

/** The directory of a volume of the plugin whose directory name is `pluginDir` (one of the *_PLUGIN_DIR). */
export function volumeDir(rootDir: string, podUID: string, pluginDir: string, volumeName: string): string {
  return join(rootDir, 'pods', podUID, 'volumes', pluginDir, volumeName);
}

export function containerDir(rootDir: string, podUID: string, containerName: string): string {
  return join(rootDir, 'pods', podUID, 'containers', containerName);
}

export function etcHostsPath(rootDir: string, podUID: string): string {
  return join(rootDir, 'pods', podUID, 'etc-hosts');
}

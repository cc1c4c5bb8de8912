/**
 * The on-disk layout of pod data, as upstream's:
 *
 *   <rootDir>/pods/<podUID>/
 *     volumes/orch.io~empty-dir/<volumeName>/   an emptyDir (a tmpfs mount point for medium Memory)
 *     containers/<containerName>/               per-container files (termination logs)
 *     etc-hosts                                 the pod's /etc/hosts
 */
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { VOLUME_INVALID } from './types.js';

export const EMPTY_DIR_PLUGIN_DIR = 'orch.io~empty-dir';

/**
 * Throws `VOLUME_INVALID` unless `name` can be one path component: not empty, not `.` or `..`,
 * no `/` and no NUL. Pod UIDs, volume names and container names pass through here before they
 * become paths, so a bad name can never reach outside the pod directory.
 */
export function checkPathComponent(name: string, what: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new OrchError(VOLUME_INVALID, 'invalid', `${what} ${JSON.stringify(name)} cannot be used as a directory name`, {
      subject: what,
    });
  }
}

/** The pod's UID, checked to be usable as a directory name. Throws `VOLUME_INVALID`. */
export function podUIDOf(pod: Pod): string {
  const uid = pod.metadata?.uid ?? '';
  if (uid === '') {
    const name = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    throw new OrchError(VOLUME_INVALID, 'invalid', `pod ${name} has no metadata.uid`, { subject: 'metadata.uid' });
  }
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

export function containerDir(rootDir: string, podUID: string, containerName: string): string {
  return join(rootDir, 'pods', podUID, 'containers', containerName);
}

export function etcHostsPath(rootDir: string, podUID: string): string {
  return join(rootDir, 'pods', podUID, 'etc-hosts');
}

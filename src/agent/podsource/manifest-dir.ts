/**
 * A watched manifest directory between full scans (lookAtPath, file-scan.ts): each file's
 * last outcome, updated for the files that notifications name (file-source.ts), so that a
 * change costs a stat and a read of those files instead of a listing and a stat of every
 * file. The pods are assembled from all outcomes at each snapshot, so that the duplicate-name
 * rule (the file first in name order owns a pod's full name) holds exactly as after a full
 * scan.
 */
import { join } from 'node:path';

import type { NodePod } from '../../api/pod/index.js';

import { assembleDirectory, lookAtFiles, type DirectoryEntries, type ManifestOutcome, type RejectedManifest, type ScanContext } from './file-scan.js';

export class ManifestDirectory {
  /** `entries`: the outcomes of a full scan of `path`, taken over (not copied). */
  constructor(
    readonly path: string,
    private readonly entries: DirectoryEntries,
  ) {}

  /**
   * Looks again at the named files (names in the directory, dot-files left out by the caller)
   * and keeps what each gives; a file gone leaves the set. A file rejected just after a change
   * (RACY_WINDOW_MS) keeps its last outcome for now, since its writer may not be done (a file
   * truncated, then written in place, would otherwise lose its pod for an instant, and the pod
   * would be restarted): the names of those are returned, to be looked at again once that
   * window has passed. Never throws.
   */
  async update(names: readonly string[], context: ScanContext): Promise<string[]> {
    const looks = await lookAtFiles(names.map((name) => join(this.path, name)), context);
    const held: string[] = [];
    for (const [i, name] of names.entries()) {
      const look = looks[i];
      if (look === undefined) continue;
      const file = join(this.path, name);
      if (look.outcome === undefined) this.entries.delete(file);
      else if ('pod' in look.outcome || !look.justChanged) this.entries.set(file, look.outcome);
      else held.push(name);
    }
    return held;
  }

  /** Each file's outcome now (a copy). */
  outcomes(): Map<string, ManifestOutcome> {
    return new Map(this.entries);
  }

  /** The pods (copies, to be changed at will) and the rejected manifests, as a full look would give them. */
  snapshot(): { pods: NodePod[]; rejected: RejectedManifest[] } {
    return assembleDirectory(this.entries);
  }
}

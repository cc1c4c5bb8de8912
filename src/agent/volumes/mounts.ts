/**
 * A container's mounts: its volumeMounts resolved against the prepared pod volumes (read-only,
 * subPath, subPathExpr, propagation), plus the pod's /etc/hosts when one was written and the
 * container does not mount its own.
 */
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { expandSubPathExpr, resolveSubPath } from './subpath.js';
import { VOLUME_INVALID, type Mount, type MountPropagation, type PodVolumes } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const ETC_HOSTS_CONTAINER_PATH = '/etc/hosts';

export interface MountsForOptions {
  /** The container's resolved environment, for subPathExpr. */
  readonly env?: ReadonlyMap<string, string>;
  /** The pod's etc-hosts file (from writeEtcHosts); mounted at /etc/hosts unless the container mounts something there. */
  readonly etcHostsPath?: string;
}

const PROPAGATIONS: readonly string[] = ['None', 'HostToContainer', 'Bidirectional'] satisfies MountPropagation[];

function isPropagation(value: string): value is MountPropagation {
  return PROPAGATIONS.includes(value);
}

function invalid(container: string, message: string): OrchError {
  return new OrchError(VOLUME_INVALID, 'invalid', `container "${container}": ${message}`, { subject: `container ${container}` });
}

/**
 * Resolves the container's volume mounts, in order. Blocks on the file system only to resolve and
 * create subPath directories (idempotent). Throws OrchError `VOLUME_INVALID` (an unknown volume,
 * a repeated or empty mountPath, a bad mountPropagation, Bidirectional in an unprivileged
 * container, recursiveReadOnly Enabled, subPath with subPathExpr) or `VOLUME_SUBPATH_INVALID`.
 */
export async function mountsFor(
  container: Container | EphemeralContainer,
  podVolumes: PodVolumes,
  options: MountsForOptions = {},
): Promise<Mount[]> {
  const name = container.name;
  const privileged = container.securityContext?.privileged === true;
  const mounts: Mount[] = [];
  const seen = new Set<string>();
  for (const vm of container.volumeMounts ?? []) {
    const volume = podVolumes.get(vm.name);
    if (volume === undefined) throw invalid(name, `cannot find volume "${vm.name}" to mount at ${vm.mountPath}`);
    if (vm.mountPath === '') throw invalid(name, `the mount of volume "${vm.name}" has an empty mountPath`);
    if (seen.has(vm.mountPath)) throw invalid(name, `mountPath ${vm.mountPath} is used more than once`);
    seen.add(vm.mountPath);
    if (vm.recursiveReadOnly === 'Enabled') {
      throw invalid(name, `volume "${vm.name}": recursiveReadOnly Enabled is not supported on this node`);
    }
    const propagation = vm.mountPropagation;
    if (propagation !== undefined && !isPropagation(propagation)) {
      throw invalid(name, `volume "${vm.name}": unknown mountPropagation ${quoteValue(propagation)}; use None, HostToContainer or Bidirectional`);
    }
    if (propagation === 'Bidirectional' && !privileged) {
      throw invalid(name, `volume "${vm.name}": Bidirectional mount propagation is available only to privileged containers`);
    }
    const subPathExpr = vm.subPathExpr ?? '';
    if (subPathExpr !== '' && (vm.subPath ?? '') !== '') {
      throw invalid(name, `volume "${vm.name}": subPath and subPathExpr are mutually exclusive`);
    }
    const subPath = subPathExpr !== '' ? expandSubPathExpr(subPathExpr, options.env ?? new Map()) : (vm.subPath ?? '');
    const hostPath =
      subPath === '' ? volume.hostPath : await resolveSubPath(volume.hostPath, { container: name, volume: vm.name, subPath });
    const mount: Mount = { containerPath: vm.mountPath, hostPath, readonly: vm.readOnly === true || volume.readOnly };
    mounts.push(propagation === undefined ? mount : { ...mount, propagation });
  }
  if (options.etcHostsPath !== undefined && !seen.has(ETC_HOSTS_CONTAINER_PATH)) {
    mounts.push({ containerPath: ETC_HOSTS_CONTAINER_PATH, hostPath: options.etcHostsPath, readonly: false });
  }
  return mounts;
}

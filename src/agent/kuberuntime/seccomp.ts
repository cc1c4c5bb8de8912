/**
 * Seccomp profiles of sandboxes and containers (upstream: getSeccompProfile and
 * fieldSeccompProfile), with --seccomp-default (seccompDefault) as the fallback. Pure.
 *
 *   | container field   | pod field         | profile                                        |
 *   |-------------------|-------------------|------------------------------------------------|
 *   | set               | any               | the container's                                |
 *   | unset             | set               | the pod's                                      |
 *   | unset             | unset             | RuntimeDefault with seccompDefault, else       |
 *   |                   |                   | Unconfined                                     |
 *
 * A Localhost profile is the file `<profileRoot>/<localhostProfile>` (upstream: the agent's
 * `<rootDir>/seccomp`); the runtime reads it when it creates the container.
 */
import type { Pod, SeccompProfile } from 'kubernetes-types/core/v1.js';
import path from 'node:path';
import { OrchError } from '../../api/errors.js';
import type { SecurityProfile } from '../runtime/cri/index.js';

/** The pod's hostname, subdomain, FQDN or seccomp profile cannot be used (reported as ConfigPodSandboxError or CreateContainerConfigError). */
export const KUBERUNTIME_SANDBOX_CONFIG_INVALID = 'KUBERUNTIME_SANDBOX_CONFIG_INVALID';

/** Where Localhost seccomp profiles are by default (upstream: `<rootDir>/seccomp`). */
export const DEFAULT_SECCOMP_PROFILE_ROOT = '/var/lib/nodeagent/seccomp';

/** --seccomp-default and the directory of Localhost profiles. */
export interface SeccompSettings {
  readonly runtimeDefault: boolean;
  readonly profileRoot: string;
}

/**
 * The seccomp profile of a container, or of the sandbox when `containerField` is undefined
 * (upstream getSeccompProfile): the container's field, else the pod's, else RuntimeDefault with
 * --seccomp-default, else Unconfined. Throws KUBERUNTIME_SANDBOX_CONFIG_INVALID for a Localhost
 * profile without localhostProfile.
 */
export function seccompProfile(pod: Pod, containerField: SeccompProfile | undefined, settings: SeccompSettings): SecurityProfile {
  const field = containerField ?? pod.spec?.securityContext?.seccompProfile;
  if (field === undefined) return { profileType: settings.runtimeDefault ? 'RuntimeDefault' : 'Unconfined' };
  if (field.type === 'RuntimeDefault') return { profileType: 'RuntimeDefault' };
  if (field.type === 'Localhost') {
    const profile = field.localhostProfile ?? '';
    if (profile === '') {
      throw new OrchError(KUBERUNTIME_SANDBOX_CONFIG_INVALID, 'invalid', 'localhostProfile must be set if seccompProfile type is Localhost.', { subject: 'securityContext.seccompProfile.localhostProfile' });
    }
    return { profileType: 'Localhost', localhostRef: path.join(settings.profileRoot, profile) };
  }
  return { profileType: 'Unconfined' };
}

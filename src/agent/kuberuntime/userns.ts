/**
 * Admission of a pod that asks for its own user namespace (`spec.hostUsers: false`, upstream's
 * UserNamespacesStatelessPodsSupport). Upstream's agent gives such a pod an ID mapping and the
 * runtime creates the namespace; containerd before 1.7 ignores CRI's user namespace options, so
 * the pod would silently run in the host's user namespace, and this agent allocates no
 * mappings. The pod is refused at admission instead, with a reason naming what is missing: the
 * gate when it is off (upstream's API server drops the field then; orch-apiserver keeps it, so
 * the agent refuses it), else the runtime and its version. `hostUsers` absent or true admits.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';

/** The pod status reason of a refused `hostUsers: false`. */
export const USER_NAMESPACES_UNSUPPORTED = 'UserNamespacesUnsupported';

export interface UserNamespaceAdmissionOptions {
  /** The UserNamespacesStatelessPodsSupport gate. */
  readonly gate: boolean;
  /** The runtime's CRI Version call, made only for a pod that asks. */
  readonly runtime: { version(apiVersion: string): Promise<{ readonly runtimeName: string; readonly runtimeVersion: string }> };
}

export type UserNamespaceAdmitResult = { readonly admit: true } | { readonly admit: false; readonly reason: string; readonly message: string };

const ASKED = 'pod asks for its own user namespace (spec.hostUsers: false)';

function refuse(message: string): UserNamespaceAdmitResult {
  return { admit: false, reason: USER_NAMESPACES_UNSUPPORTED, message: `${ASKED}, ${message}` };
}

/** containerd's version as [major, minor], or undefined when it is not one. */
function containerdMinor(name: string, version: string): readonly [number, number] | undefined {
  if (name !== 'containerd') return undefined;
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}

/** The admission handler (for the sync loop's admit list). */
export function createUserNamespaceAdmission(options: UserNamespaceAdmissionOptions): (pod: Pod) => UserNamespaceAdmitResult | Promise<UserNamespaceAdmitResult> {
  return (pod) => {
    if (pod.spec?.hostUsers !== false) return { admit: true };
    if (!options.gate) return refuse('but the feature gate UserNamespacesStatelessPodsSupport is off on this node');
    return options.runtime.version('v1').then(({ runtimeName: name, runtimeVersion: version }) => {
      const cd = containerdMinor(name, version);
      if (cd !== undefined && (cd[0] < 1 || (cd[0] === 1 && cd[1] < 7))) {
        return refuse(`but the container runtime ${name} ${version} cannot create one: containerd before 1.7 ignores CRI's user namespace options, so the pod would run in the host's user namespace`);
      }
      return refuse(`but this node agent allocates no user namespace ID mappings for the container runtime ${name} ${version}, so the pod would run in the host's user namespace`);
    }, (err: unknown) => refuse(`and the container runtime's version cannot be read to decide whether it can create one: ${messageOf(err)}`));
  };
}

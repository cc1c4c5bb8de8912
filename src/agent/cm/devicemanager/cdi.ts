/**
 * CDI devices in a plugin's answer (the DevicePluginCDIDevices gate, alpha in the upstream agent
 * v1.28): the CRI passes them by name and the runtime resolves them from its CDI specs. A
 * runtime that predates CDI (containerd before 1.7, CRI-O before 1.23) ignores the field, so the
 * container would start without its devices: such a container is refused instead, naming the
 * devices and the runtime. With the gate off the names are not passed (as upstream), and the
 * agent says so once per container rather than dropping them silently.
 */
import { OrchError } from '../../../api/errors.js';

/** A container's devices include CDI devices the runtime cannot take. */
export const DEVICE_CDI_UNSUPPORTED = 'DEVICE_CDI_UNSUPPORTED';

/** The first runtime version of each runtime that resolves CDI devices of the CRI. */
const CDI_SINCE: Readonly<Record<string, readonly [number, number]>> = {
  containerd: [1, 7],
  'cri-o': [1, 23],
};

/** Whether the runtime (CRI Version's name and version, e.g. containerd and v1.6.20) passes CDI devices on. */
export function runtimeSupportsCDI(name: string, version: string): boolean {
  const since = CDI_SINCE[name.toLowerCase()];
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (since === undefined || m === null) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > since[0] || (major === since[0] && minor >= since[1]);
}

export function cdiUnsupported(container: string, pod: string, devices: readonly string[], runtime: { readonly name: string; readonly version: string }): OrchError {
  return new OrchError(DEVICE_CDI_UNSUPPORTED, 'invalid',
    `container ${container} of pod ${pod} is given the CDI devices ${devices.join(', ')} by its device plugin, but the container runtime ${runtime.name} ${runtime.version} does not support CDI (containerd 1.7, CRI-O 1.23 or later do): it would start without them`,
    { subject: `pods/${pod}/containers/${container}` });
}

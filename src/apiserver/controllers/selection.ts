/**
 * The names of the control loops and `--controllers` (kube-controller-manager's flag and
 * grammar): a list where `*` enables every loop, `name` enables one and `-name` disables one;
 * the first item that names a loop decides, and a loop no item names runs only when `*` is
 * given. An empty list runs none. Upstream's older names are accepted for the loops that had them
 * (nodelifecycle, podgc, serviceaccount, root-ca-cert-publisher, persistentvolume-binder,
 * attachdetach, pvc-protection, pv-protection, ephemeral-volume). Imports nothing: the flag parser reads it before anything loads.
 */
export const CONTROLLER_NAMES = [
  'scheduler', 'node-lifecycle-controller', 'taint-eviction-controller', 'pod-garbage-collector-controller', 'serviceaccount-controller',
  'root-ca-certificate-publisher-controller', 'persistentvolume-binder-controller', 'persistentvolume-attach-detach-controller',
  'persistentvolumeclaim-protection-controller', 'persistentvolume-protection-controller', 'ephemeral-volume-controller',
] as const;
export type ControllerName = (typeof CONTROLLER_NAMES)[number];

const ALIASES: Readonly<Record<string, ControllerName>> = {
  nodelifecycle: 'node-lifecycle-controller',
  podgc: 'pod-garbage-collector-controller',
  serviceaccount: 'serviceaccount-controller',
  'root-ca-cert-publisher': 'root-ca-certificate-publisher-controller',
  'persistentvolume-binder': 'persistentvolume-binder-controller',
  attachdetach: 'persistentvolume-attach-detach-controller',
  'pvc-protection': 'persistentvolumeclaim-protection-controller',
  'pv-protection': 'persistentvolume-protection-controller',
  'ephemeral-volume': 'ephemeral-volume-controller',
};

function canonical(name: string): string {
  return ALIASES[name] ?? name;
}

/** The problems of a --controllers list (unknown names), each naming the item. */
export function controllerListProblems(list: readonly string[]): string[] {
  return list
    .map((item) => (item.startsWith('-') ? item.slice(1) : item))
    .filter((name) => name !== '*' && !(CONTROLLER_NAMES as readonly string[]).includes(canonical(name)))
    .map((name) => `--controllers: ${JSON.stringify(name)} is not in the list of known controllers: ${CONTROLLER_NAMES.join(', ')}`);
}

/** Whether `--controllers` (already checked) enables the loop. */
export function controllerEnabled(list: readonly string[], name: ControllerName): boolean {
  let star = false;
  for (const item of list) {
    if (canonical(item) === name) return true;
    if (item.startsWith('-') && canonical(item.slice(1)) === name) return false;
    if (item === '*') star = true;
  }
  return star;
}

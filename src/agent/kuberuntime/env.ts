/**
 * A container's environment as upstream's makeEnvironmentVariables builds it: the spec's env
 * in order (a later duplicate overrides an earlier one in place), each value `$(VAR)`-expanded
 * against the variables defined before it, or read from the downward API (fieldRef,
 * resourceFieldRef) or a ConfigMap or Secret key (configMapKeyRef, secretKeyRef); the keys of
 * the envFrom sources come first, with their prefix, and the spec's env overrides them; then the
 * command and args expanded against the whole environment. A missing object or key fails the
 * container (CreateContainerConfigError) unless the reference is optional, when the variable (or
 * the whole envFrom source) is left out, as upstream.
 *
 * Pure: the pod IPs, host IPs, node capacity and the objects (read by env-sources.ts) are passed in.
 */
import type { Container, EnvVar, ObjectFieldSelector, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../api/errors.js';
import type { NodeCapacity } from '../../api/node-capacity.js';
import { metadataFieldValue } from '../../api/pod/index.js';
import { parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../../api/quantity.js';
import type { NodePod } from '../../api/pod/index.js';
import { envData, isEnvVarName, KUBERUNTIME_ENV_REFERENCE_NOT_FOUND, NO_ENV_OBJECTS, type EnvObjects } from './env-sources.js';

/** A container's environment could not be built (reported as CreateContainerConfigError). */
export const KUBERUNTIME_ENV_INVALID = 'KUBERUNTIME_ENV_INVALID';

/** The node's allocatable resources: what unset limits mean to the downward API. */
export type { NodeCapacity };

export interface EnvContext {
  readonly pod: NodePod;
  readonly container: Container;
  /** The pod's IPs, primary first (the node's IPs for a host-network pod). */
  readonly podIPs: readonly string[];
  readonly hostIPs: readonly string[];
  /** The PodHostIPs gate: without it `status.hostIPs` resolves to "" (upstream v1.28). */
  readonly podHostIPs?: boolean;
  /** Used when the pod's spec.nodeName is empty (static pods). */
  readonly nodeName: string;
  readonly capacity: NodeCapacity;
  /** The ConfigMaps and Secrets the container's env names (readEnvObjects); default none. */
  readonly objects?: EnvObjects;
}

export interface EnvVarValue {
  readonly name: string;
  readonly value: string;
}

const OPERATOR = '$';
const OPENER = '(';
const CLOSER = ')';

/**
 * Expands `$(NAME)` references in `input` with `mapping`, as upstream's expansion package:
 * `$$` is an escaped `$`, an unterminated `$(` and a `$` before anything else stay as written.
 */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== OPERATOR || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let advance = 1;
    if (rest[0] === OPERATOR) {
      out += OPERATOR;
    } else if (rest[0] === OPENER) {
      const close = rest.indexOf(CLOSER, 1);
      if (close < 0) {
        out += OPERATOR + OPENER;
      } else {
        out += mapping(rest.slice(1, close));
        advance = close + 1;
      }
    } else {
      out += OPERATOR + (rest[0] ?? '');
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** A mapping that looks `name` up in each map in turn and leaves unknown references as written. */
export function mappingFor(...contexts: readonly ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const vars of contexts) {
      const value = vars.get(name);
      if (value !== undefined) return value;
    }
    return `$(${name})`;
  };
}

function invalid(message: string, subject: string): OrchError {
  return new OrchError(KUBERUNTIME_ENV_INVALID, 'invalid', message, { subject });
}

/** The value of a fieldRef (upstream: podFieldSelectorRuntimeValue and ExtractFieldPathAsString). */
export function fieldRefValue(ref: ObjectFieldSelector, ctx: EnvContext, subject: string): string {
  const { pod } = ctx;
  switch (ref.fieldPath) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      if (ctx.hostIPs[0] === undefined) throw invalid('cannot resolve status.hostIP: the node has no known IP', subject);
      return ctx.hostIPs[0];
    case 'status.hostIPs':
      return ctx.podHostIPs === true ? ctx.hostIPs.join(',') : '';
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
  }
  const value = metadataFieldValue(pod.metadata, ref.fieldPath);
  if (value !== undefined) return value;
  throw invalid(`unsupported fieldPath: ${ref.fieldPath}`, subject);
}

function quantityOr(text: string | undefined, fallback: number, milli: boolean, subject: string): number {
  if (text === undefined) return fallback;
  try {
    const q = parseQuantity(text, subject);
    return milli ? quantityMilliValue(q) : quantityValue(q);
  } catch (err) {
    throw invalid(`invalid quantity ${JSON.stringify(text)}: ${err instanceof Error ? err.message : String(err)}`, subject);
  }
}

/** The value of a resourceFieldRef (upstream: ExtractContainerResourceValue with limits defaulted to the node's allocatable). */
export function resourceFieldRefValue(ref: ResourceFieldSelector, ctx: EnvContext, subject: string): string {
  const all = [...(ctx.pod.spec?.containers ?? []), ...(ctx.pod.spec?.initContainers ?? [])];
  const target = ref.containerName === undefined || ref.containerName === '' ? ctx.container : all.find((c) => c.name === ref.containerName);
  if (target === undefined) throw invalid(`resourceFieldRef names an unknown container ${JSON.stringify(ref.containerName)}`, subject);
  let divisor: Quantity | undefined;
  try {
    divisor = ref.divisor === undefined ? undefined : parseQuantity(ref.divisor, `${subject}.divisor`);
  } catch (err) {
    throw invalid(`invalid divisor: ${err instanceof Error ? err.message : String(err)}`, subject);
  }
  const limits = target.resources?.limits ?? {};
  const requests = target.resources?.requests ?? {};
  const [kind, name] = ref.resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || name === undefined) throw invalid(`unsupported container resource: ${ref.resource}`, subject);
  const cap = ctx.capacity;
  const unsetLimit = name === 'cpu' ? cap.cpuMilli : name === 'memory' ? cap.memoryBytes : name === 'ephemeral-storage' ? (cap.ephemeralStorageBytes ?? 0) : 0;
  const milli = name === 'cpu';
  if (name !== 'cpu' && name !== 'memory' && name !== 'ephemeral-storage' && !name.startsWith('hugepages-')) {
    throw invalid(`unsupported container resource: ${ref.resource}`, subject);
  }
  const limit = quantityOr(limits[name], unsetLimit, milli, subject);
  const value = kind === 'limits' ? limit : quantityOr(requests[name] ?? limits[name], 0, milli, subject);
  // The divisor in the value's unit (thousandths for CPU); an unset or zero divisor is 1.
  const div = divisor === undefined || divisor.mantissa === 0n ? (milli ? 1000 : 1) : milli ? quantityMilliValue(divisor) : quantityValue(divisor);
  return String(Math.ceil(value / div));
}

function notFound(message: string, subject: string): OrchError {
  return new OrchError(KUBERUNTIME_ENV_REFERENCE_NOT_FOUND, 'not-found', message, { subject });
}

/** A key of a ConfigMap or Secret (undefined: the variable is left out, the reference being optional). */
function keyValue(env: EnvVar, ctx: EnvContext, subject: string): string | undefined {
  const from = env.valueFrom;
  const ref = from?.configMapKeyRef ?? from?.secretKeyRef;
  if (ref === undefined) return undefined;
  const kind = from?.configMapKeyRef !== undefined ? 'ConfigMap' : 'Secret';
  const name = ref.name ?? '';
  const optional = ref.optional === true;
  const objects = ctx.objects ?? NO_ENV_OBJECTS;
  const object = kind === 'ConfigMap' ? objects.configMaps.get(name) : objects.secrets.get(name);
  const where = `${ctx.pod.metadata.namespace}/${name}`;
  if (object === undefined) {
    if (optional) return undefined;
    throw notFound(`env ${env.name}: ${kind.toLowerCase()} ${where} not found`, subject);
  }
  const value = envData(object, kind).get(ref.key);
  if (value === undefined && !optional) throw notFound(`env ${env.name}: couldn't find key ${ref.key} in ${kind} ${where}`, subject);
  return value;
}

function valueOf(env: EnvVar, ctx: EnvContext, mapping: (name: string) => string, subject: string): string | undefined {
  if (env.value !== undefined && env.value !== '') return expand(env.value, mapping);
  const from = env.valueFrom;
  if (from === undefined) return '';
  if (from.fieldRef !== undefined) return fieldRefValue(from.fieldRef, ctx, subject);
  if (from.resourceFieldRef !== undefined) return resourceFieldRefValue(from.resourceFieldRef, ctx, subject);
  if (from.configMapKeyRef !== undefined || from.secretKeyRef !== undefined) return keyValue(env, ctx, subject);
  return '';
}

/** The variables of the envFrom sources, in order, with their prefix; keys that are not variable names are skipped (invalidEnvFromKeys reports them). */
function envFromVars(ctx: EnvContext, vars: Map<string, string>): void {
  const objects = ctx.objects ?? NO_ENV_OBJECTS;
  (ctx.container.envFrom ?? []).forEach((from, i) => {
    const kind = from.configMapRef !== undefined ? 'ConfigMap' : 'Secret';
    const ref = from.configMapRef ?? from.secretRef;
    const name = ref?.name ?? '';
    const object = kind === 'ConfigMap' ? objects.configMaps.get(name) : objects.secrets.get(name);
    if (object === undefined) {
      if (ref?.optional === true) return;
      throw notFound(`envFrom: ${kind.toLowerCase()} ${ctx.pod.metadata.namespace}/${name} not found`, `containers[${ctx.container.name}].envFrom[${i}]`);
    }
    for (const [key, value] of [...envData(object, kind)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const variable = `${from.prefix ?? ''}${key}`;
      if (isEnvVarName(variable)) vars.set(variable, value);
    }
  });
}

/**
 * The container's environment: the envFrom variables, then the spec's env in order. Throws
 * OrchError KUBERUNTIME_ENV_INVALID (category invalid) for a field path or resource the agent
 * does not know, KUBERUNTIME_ENV_REFERENCE_NOT_FOUND for a missing object or key that is not
 * optional.
 */
export function makeEnvironment(ctx: EnvContext): EnvVarValue[] {
  const name = ctx.container.name;
  const vars = new Map<string, string>();
  envFromVars(ctx, vars);
  const mapping = mappingFor(vars);
  for (const env of ctx.container.env ?? []) {
    const value = valueOf(env, ctx, mapping, `containers[${name}].env[${env.name}]`);
    if (value !== undefined) vars.set(env.name, value);
  }
  return [...vars].map(([k, v]) => ({ name: k, value: v }));
}

/** The command and args with `$(VAR)` references to the environment expanded. */
export function expandCommand(container: Container, env: readonly EnvVarValue[]): { command: string[]; args: string[] } {
  const mapping = mappingFor(new Map(env.map((e) => [e.name, e.value])));
  return { command: (container.command ?? []).map((c) => expand(c, mapping)), args: (container.args ?? []).map((a) => expand(a, mapping)) };
}

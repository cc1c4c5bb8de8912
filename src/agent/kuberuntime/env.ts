/**
 * A container's environment as upstream's makeEnvironmentVariables builds it: the spec's env
 * in order (a later duplicate overrides an earlier one in place), each value `$(VAR)`-expanded
 * against the variables defined before it, or read from the downward API (fieldRef,
 * resourceFieldRef); then the command and args expanded against the whole environment.
 * configMap and secret sources need the API server, which the agent does not read yet: they
 * fail the container with CreateContainerConfigError.
 *
 * Pure: the pod IPs, host IPs and node capacity are passed in.
 */
import type { Container, EnvVar, ObjectFieldSelector, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../api/errors.js';
import type { NodeCapacity } from '../../api/node-capacity.js';
import { metadataFieldValue } from '../../api/pod/downward.js';
import { parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../../api/quantity.js';
import type { NodePod } from '../../api/pod/index.js';

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
  /** Used when the pod's spec.nodeName is empty (static pods). */
  readonly nodeName: string;
  readonly capacity: NodeCapacity;
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
      return ctx.hostIPs.join(',');
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

function valueOf(env: EnvVar, ctx: EnvContext, mapping: (name: string) => string, subject: string): string {
  if (env.value !== undefined && env.value !== '') return expand(env.value, mapping);
  const from = env.valueFrom;
  if (from === undefined) return '';
  if (from.fieldRef !== undefined) return fieldRefValue(from.fieldRef, ctx, subject);
  if (from.resourceFieldRef !== undefined) return resourceFieldRefValue(from.resourceFieldRef, ctx, subject);
  if (from.configMapKeyRef !== undefined) {
    throw invalid(`env ${env.name}: configMapKeyRef ${from.configMapKeyRef.name ?? ''}/${from.configMapKeyRef.key} needs the API server, which this agent does not read yet`, subject);
  }
  if (from.secretKeyRef !== undefined) {
    throw invalid(`env ${env.name}: secretKeyRef ${from.secretKeyRef.name ?? ''}/${from.secretKeyRef.key} needs the API server, which this agent does not read yet`, subject);
  }
  return '';
}

/**
 * The container's environment, in the spec's order. Throws OrchError KUBERUNTIME_ENV_INVALID
 * (category invalid) for a source the agent cannot read or a field path it does not know.
 */
export function makeEnvironment(ctx: EnvContext): EnvVarValue[] {
  const name = ctx.container.name;
  for (const from of ctx.container.envFrom ?? []) {
    const source = from.configMapRef !== undefined ? `configMapRef ${from.configMapRef.name ?? ''}` : `secretRef ${from.secretRef?.name ?? ''}`;
    throw invalid(`envFrom ${source} needs the API server, which this agent does not read yet`, `containers[${name}].envFrom`);
  }
  const vars = new Map<string, string>();
  const mapping = mappingFor(vars);
  for (const env of ctx.container.env ?? []) {
    vars.set(env.name, valueOf(env, ctx, mapping, `containers[${name}].env[${env.name}]`));
  }
  return [...vars].map(([k, v]) => ({ name: k, value: v }));
}

/** The command and args with `$(VAR)` references to the environment expanded. */
export function expandCommand(container: Container, env: readonly EnvVarValue[]): { command: string[]; args: string[] } {
  const mapping = mappingFor(new Map(env.map((e) => [e.name, e.value])));
  return { command: (container.command ?? []).map((c) => expand(c, mapping)), args: (container.args ?? []).map((a) => expand(a, mapping)) };
}

/**
 * Validation of the map- and list-valued fields: eviction thresholds and their grace periods
 * and reclaims, reserved resources, QoS reservations, manager policy options, unsafe sysctls,
 * per-NUMA reserved memory and the static-pod URL headers.
 */
import type { FeatureGates } from './feature-gates.js';
import type { NodeagentConfiguration } from './types.js';
import {
  evictionThresholdProblem, gracePeriodProblem, minimumReclaimProblem, reservedResourceProblems, sysctlPatternProblem,
} from './validate-values.js';
import { parseQuantity } from '../../api/quantity.js';
import { messageOf } from '../../api/errors.js';
import { quoteValue } from '../../api/quote.js';

type Add = (field: string, message: string) => void;

const CPU_MANAGER_OPTIONS: Readonly<Record<string, string>> = {
  'full-pcpus-only': 'CPUManagerPolicyBetaOptions',
  'distribute-cpus-across-numa': 'CPUManagerPolicyAlphaOptions',
  'align-by-socket': 'CPUManagerPolicyAlphaOptions',
};
const TOPOLOGY_MANAGER_OPTIONS: Readonly<Record<string, string>> = {
  'prefer-closest-numa-nodes': 'TopologyManagerPolicyBetaOptions',
};

function policyOptions(
  add: Add,
  g: FeatureGates,
  field: string,
  options: Readonly<Record<string, string>>,
  known: Readonly<Record<string, string>>,
  gate: string,
): void {
  if (Object.keys(options).length === 0) return;
  if (!g.enabled(gate)) add(field, `needs the feature gate ${gate}, which is off`);
  for (const [key, value] of Object.entries(options)) {
    const optionGate = known[key];
    if (optionGate === undefined) {
      add(field, `unknown option ${quoteValue(key)}; allowed: ${Object.keys(known).join(', ')}`);
      continue;
    }
    if (!g.enabled(optionGate)) add(field, `option ${key} needs the feature gate ${optionGate}, which is off`);
    if (value !== 'true' && value !== 'false') add(field, `option ${key} must be true or false, got ${quoteValue(value)}`);
  }
}

export function validateMaps(c: NodeagentConfiguration, g: FeatureGates, add: Add): void {
  const hard = c.evictionHard;
  const soft = c.evictionSoft;
  const grace = c.evictionSoftGracePeriod;
  for (const [signal, value] of Object.entries(hard)) {
    const p = evictionThresholdProblem(signal, value);
    if (p !== undefined) add('evictionHard', p);
  }
  for (const [signal, value] of Object.entries(soft)) {
    const p = evictionThresholdProblem(signal, value);
    if (p !== undefined) add('evictionSoft', p);
    if (grace[signal] === undefined) add('evictionSoftGracePeriod', `the soft threshold of ${signal} needs a grace period`);
  }
  for (const [signal, value] of Object.entries(grace)) {
    if (soft[signal] === undefined) add('evictionSoftGracePeriod', `grace period given for ${signal}, which has no soft threshold`);
    const p = gracePeriodProblem(signal, value);
    if (p !== undefined) add('evictionSoftGracePeriod', p);
  }
  for (const [signal, value] of Object.entries(c.evictionMinimumReclaim)) {
    const p = minimumReclaimProblem(signal, value);
    if (p !== undefined) add('evictionMinimumReclaim', p);
  }

  for (const p of reservedResourceProblems(c.systemReserved)) add('systemReserved', p);
  for (const p of reservedResourceProblems(c.orchReserved)) add('orchReserved', p);

  const qos = c.qosReserved;
  if (Object.keys(qos).length > 0 && !g.enabled('QOSReserved')) add('qosReserved', 'needs the feature gate QOSReserved, which is off');
  for (const [resource, value] of Object.entries(qos)) {
    if (resource !== 'memory') add('qosReserved', `only memory can be reserved, got ${quoteValue(resource)}`);
    const n = Number(value.replace(/%$/, ''));
    if (!value.endsWith('%') || !Number.isFinite(n) || n < 0 || n > 100) {
      add('qosReserved', `${resource}: ${quoteValue(value)} must be a percentage from 0% to 100%`);
    }
  }

  policyOptions(add, g, 'cpuManagerPolicyOptions', c.cpuManagerPolicyOptions, CPU_MANAGER_OPTIONS, 'CPUManagerPolicyOptions');
  if (Object.keys(c.cpuManagerPolicyOptions).length > 0 && c.cpuManagerPolicy !== 'static') {
    add('cpuManagerPolicyOptions', 'are only accepted with cpuManagerPolicy static');
  }
  policyOptions(add, g, 'topologyManagerPolicyOptions', c.topologyManagerPolicyOptions, TOPOLOGY_MANAGER_OPTIONS, 'TopologyManagerPolicyOptions');

  c.allowedUnsafeSysctls.forEach((s, i) => {
    const p = sysctlPatternProblem(s);
    if (p !== undefined) add(`allowedUnsafeSysctls[${i}]`, p);
  });

  const numaSeen = new Set<number>();
  c.reservedMemory.forEach((r, i) => {
    const field = `reservedMemory[${i}]`;
    if (r.numaNode < 0) add(`${field}.numaNode`, `must not be negative, got ${r.numaNode}`);
    if (numaSeen.has(r.numaNode)) add(`${field}.numaNode`, `NUMA node ${r.numaNode} is listed twice`);
    numaSeen.add(r.numaNode);
    for (const [resource, value] of Object.entries(r.limits)) {
      if (resource !== 'memory' && !resource.startsWith('hugepages-')) {
        add(`${field}.limits`, `unknown resource ${quoteValue(resource)}; allowed: memory, hugepages-<size>`);
      }
      try {
        const q = parseQuantity(value).mantissa;
        if (q < 0n) add(`${field}.limits`, `${resource} must not be negative`);
        else if (q === 0n) add(`${field}.limits`, `${resource} must not be zero (leave the resource out to reserve none on NUMA node ${r.numaNode})`);
      } catch (err) {
        add(`${field}.limits`, `${resource}: ${messageOf(err)}`);
      }
    }
  });

  for (const name of Object.keys(c.staticPodURLHeader)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) add('staticPodURLHeader', `${quoteValue(name)} is not a valid HTTP header name`);
  }
}

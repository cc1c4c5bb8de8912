/**
 * The static policy's options (cpuManagerPolicyOptions) with the feature gates upstream puts
 * them behind, and their compatibility with the machine and the topology manager policy.
 *
 *   | option                       | gate                          | effect                                         |
 *   |------------------------------|-------------------------------|------------------------------------------------|
 *   | full-pcpus-only              | CPUManagerPolicyBetaOptions   | whole physical cores only (SMTAlignmentError)  |
 *   | distribute-cpus-across-numa  | CPUManagerPolicyAlphaOptions  | spread a multi-node request evenly             |
 *   | align-by-socket              | CPUManagerPolicyAlphaOptions  | align at socket, not NUMA node, boundaries     |
 *
 * All of them also need CPUManagerPolicyOptions (configuration validation checks that too).
 */
import { OrchError } from '../../../api/errors.js';
import type { CPUTopology } from '../machine/index.js';

/** A CPU manager policy option is unknown, behind a gate that is off, malformed, or incompatible. */
export const CM_CPU_POLICY_OPTION = 'CM_CPU_POLICY_OPTION';

export interface StaticPolicyOptions {
  readonly fullPhysicalCPUsOnly: boolean;
  readonly distributeCPUsAcrossNUMA: boolean;
  readonly alignBySocket: boolean;
}

const OPTIONS: Readonly<Record<string, { readonly key: keyof StaticPolicyOptions; readonly gate: string; readonly level: string }>> = {
  'full-pcpus-only': { key: 'fullPhysicalCPUsOnly', gate: 'CPUManagerPolicyBetaOptions', level: 'Beta' },
  'distribute-cpus-across-numa': { key: 'distributeCPUsAcrossNUMA', gate: 'CPUManagerPolicyAlphaOptions', level: 'Alpha' },
  'align-by-socket': { key: 'alignBySocket', gate: 'CPUManagerPolicyAlphaOptions', level: 'Alpha' },
};

function invalid(message: string): OrchError {
  return new OrchError(CM_CPU_POLICY_OPTION, 'invalid', message, { subject: 'cpuManagerPolicyOptions' });
}

/** upstream NewStaticPolicyOptions. Throws CM_CPU_POLICY_OPTION. */
export function parseStaticPolicyOptions(options: Readonly<Record<string, string>>, gates: { enabled(name: string): boolean }): StaticPolicyOptions {
  const result = { fullPhysicalCPUsOnly: false, distributeCPUsAcrossNUMA: false, alignBySocket: false };
  for (const [name, value] of Object.entries(options)) {
    const known = OPTIONS[name];
    if (known === undefined) throw invalid(`unknown CPU Manager Policy option: ${JSON.stringify(name)}`);
    if (!gates.enabled(known.gate)) throw invalid(`CPU Manager Policy ${known.level}-level Options not enabled, but option ${JSON.stringify(name)} provided`);
    if (value !== 'true' && value !== 'false') throw invalid(`bad value for option ${JSON.stringify(name)}: ${JSON.stringify(value)} is not true or false`);
    result[known.key] = value === 'true';
  }
  return result;
}

/** upstream ValidateStaticPolicyOptions. Throws CM_CPU_POLICY_OPTION. */
export function validateStaticPolicyOptions(options: StaticPolicyOptions, topology: CPUTopology, topologyPolicy: string): void {
  if (!options.alignBySocket) return;
  if (topologyPolicy === 'single-numa-node') throw invalid('topology manager single-numa-node policy is incompatible with the CPU manager align-by-socket policy option');
  if (topology.numSockets > topology.numNUMANodes) {
    throw invalid(`align-by-socket is not compatible with hardware where number of sockets (${topology.numSockets}) are more than number of NUMA nodes (${topology.numNUMANodes})`);
  }
}

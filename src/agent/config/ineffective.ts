/**
 * Settings this agent accepts (so that upstream's configuration files load) but that cannot take
 * effect on its nodes: one warning each at start, naming the setting, when it is set to anything
 * but its default.
 */
import { defaultsOf } from './schema.js';
import { configurationSchema, type NodeagentConfiguration } from './types.js';

const WHY: Readonly<Partial<Record<keyof NodeagentConfiguration, string>>> = {
  hairpinMode: 'the runtime\'s CNI configuration decides hairpin traffic',
  makeIPTablesUtilChains: 'the agent manages no iptables chains',
  iptablesMasqueradeBit: 'the agent manages no iptables chains',
  iptablesDropBit: 'the agent manages no iptables chains',
  kernelMemcgNotification: 'memory thresholds are found by polling, at the eviction manager\'s pass every 10 s: memcg notifications need an eventfd, which Node.js cannot create',
  showHiddenMetricsForVersion: 'the agent has no hidden metrics',
};

/** One warning per setting of WHY whose value is not its default. */
export function ineffectiveSettings(c: NodeagentConfiguration): string[] {
  const defaults = defaultsOf(configurationSchema) as NodeagentConfiguration;
  const warnings: string[] = [];
  for (const [field, why] of Object.entries(WHY) as [keyof NodeagentConfiguration, string][]) {
    const value = JSON.stringify(c[field]);
    if (value === JSON.stringify(defaults[field])) continue;
    warnings.push(`${field} is accepted but has no effect on this node (${why}): ${value}`);
  }
  return warnings;
}

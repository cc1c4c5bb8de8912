/**
 * What this host's cgroups can honour, and the settings refused at start because they need
 * cgroup v2 (or swap accounting) on a node whose memory controller is on cgroup v1:
 *
 *   | setting                                  | on cgroup v1                                          |
 *   |------------------------------------------|-------------------------------------------------------|
 *   | memorySwap.swapBehavior LimitedSwap      | refused: per-container swap is memory.swap.max (v2)   |
 *   | memorySwap.swapBehavior UnlimitedSwap    | memory.memsw.limit_in_bytes -1 (refused without swap  |
 *   |                                          | accounting, i.e. no memory.memsw.* files)             |
 *   | memorySwap.swapBehavior '' / NodeSwap off| memory+swap = the memory limit (no swap beyond it)    |
 *   | feature gate MemoryQoS                   | refused: memory.min and memory.high are v2 files      |
 *   | memoryThrottlingFactor (set explicitly)  | refused: it scales memory.high (MemoryQoS, v2)        |
 *
 * Upstream refuses LimitedSwap on cgroup v1 the same way and ignores the others there; here they
 * are refused at start instead of silently ignored.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import type { CgroupHierarchy } from './hierarchies.js';

/** Settings this node's cgroups cannot honour (cgroup v2 only, or no swap accounting). */
export const CM_CGROUP_V2_REQUIRED = 'CM_CGROUP_V2_REQUIRED';

export interface HostCgroupFacts {
  /** Every controller is on the unified (v2) hierarchy. */
  readonly unified: boolean;
  /** The v1 memory hierarchy's mount point, if any. */
  readonly memoryHierarchy: string | undefined;
  /** The v1 memory controller accounts swap (memory.memsw.limit_in_bytes exists). */
  readonly swapAccounting: boolean;
}

export function hostCgroupFacts(hierarchies: readonly CgroupHierarchy[]): HostCgroupFacts {
  const memory = hierarchies.find((h) => h.version === 1 && h.controllers.includes('memory'));
  return {
    unified: !hierarchies.some((h) => h.version === 1 && !h.controllers.every((c) => c.startsWith('name='))),
    memoryHierarchy: memory?.path,
    swapAccounting: memory !== undefined && existsSync(join(memory.path, 'memory.memsw.limit_in_bytes')),
  };
}

export interface SwapSettings {
  readonly nodeSwapGate: boolean;
  /** memorySwap.swapBehavior: '', LimitedSwap or UnlimitedSwap. */
  readonly swapBehavior: string;
}

/** What containers get: memory+swap equal to the memory limit, unlimited swap, or nothing set (no swap accounting, or v2). */
export type ContainerSwap = 'no-swap' | 'unlimited' | undefined;

export function containerSwap(s: SwapSettings, facts: HostCgroupFacts): ContainerSwap {
  if (facts.unified || !facts.swapAccounting) return undefined;
  return s.nodeSwapGate && s.swapBehavior === 'UnlimitedSwap' ? 'unlimited' : 'no-swap';
}

export interface V2OnlySettings extends SwapSettings {
  readonly memoryQoSGate: boolean;
  /** memoryThrottlingFactor was given by a flag or file (its default is not a request). */
  readonly memoryThrottlingFactorSet: boolean;
}

/** The problems, each naming its field and why; empty when this node honours everything. */
export function cgroupV2Problems(s: V2OnlySettings, facts: HostCgroupFacts): string[] {
  if (facts.unified) return [];
  const where = `this node's memory controller is on cgroup v1 (${facts.memoryHierarchy ?? 'no memory hierarchy'})`;
  const problems: string[] = [];
  if (s.nodeSwapGate && s.swapBehavior === 'LimitedSwap') {
    problems.push(`memorySwap.swapBehavior: LimitedSwap limits each container's swap through memory.swap.max, which only cgroup v2 has; ${where}`);
  }
  if (s.nodeSwapGate && s.swapBehavior === 'UnlimitedSwap' && !facts.swapAccounting) {
    problems.push(`memorySwap.swapBehavior: UnlimitedSwap needs swap accounting (memory.memsw.limit_in_bytes), which this kernel's memory controller does not have (swapaccount=0)`);
  }
  if (s.memoryQoSGate) {
    problems.push(`featureGates.MemoryQoS: sets memory.min and memory.high of pods and containers, which only cgroup v2 has; ${where}`);
  }
  if (s.memoryThrottlingFactorSet) {
    problems.push(`memoryThrottlingFactor: scales the memory.high that MemoryQoS sets, which only cgroup v2 has; ${where}`);
  }
  return problems;
}

/** Throws CM_CGROUP_V2_REQUIRED listing every problem. */
export function refuseCgroupV2Settings(s: V2OnlySettings, facts: HostCgroupFacts): void {
  const problems = cgroupV2Problems(s, facts);
  if (problems.length === 0) return;
  throw new OrchError(CM_CGROUP_V2_REQUIRED, 'invalid', `settings this node's cgroups cannot honour:\n${problems.map((p) => `  - ${p}`).join('\n')}`, {
    subject: problems.map((p) => p.slice(0, p.indexOf(':'))).join(', '),
  });
}

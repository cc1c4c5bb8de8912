/**
 * The CPU manager's state (upstream: cpumanager/state): the default (shared) CPU set and the
 * exclusive assignments by pod UID and container name, kept in `<rootDir>/cpu_manager_state` in
 * upstream's v2 checkpoint format:
 *
 *   {"policyName":"static","defaultCpuSet":"0,2-3","entries":{"<pod uid>":{"<container>":"1"}},"checksum":1234}
 *
 * Every change is written through at once. At start the file is read back: a checksum that does
 * not match, a policy other than the configured one, or a CPU list that does not parse stop the
 * agent with upstream's advice to drain the node and delete the file (a changed policy is
 * refused, never silently adopted).
 */
import { join } from 'node:path';

import { OrchError, messageOf } from '../../../api/errors.js';
import {
  checkpointError, field, fnv32a, goDump, goInt, goString, parseCheckpoint, readCheckpoint, writeCheckpoint, type GoValue,
} from '../checkpoint/index.js';
import { CPUSet } from '../cpuset.js';

export const CPU_MANAGER_STATE_FILE = 'cpu_manager_state';

/** The state file cannot be used with this configuration (policy changed, corrupt, unparsable). */
export const CM_CPU_STATE_INVALID = 'CM_CPU_STATE_INVALID';

export type Assignments = ReadonlyMap<string, ReadonlyMap<string, CPUSet>>;

export interface CPUState {
  defaultCPUSet(): CPUSet;
  setDefaultCPUSet(cpus: CPUSet): void;
  cpuSet(podUID: string, container: string): CPUSet | undefined;
  setCPUSet(podUID: string, container: string, cpus: CPUSet): void;
  delete(podUID: string, container: string): void;
  assignments(): Assignments;
}

function checksumOf(policy: string, defaultSet: string, entries: Readonly<Record<string, Readonly<Record<string, string>>>>): number {
  const inner = (m: Readonly<Record<string, string>>): GoValue => ({ kind: 'map', type: 'map[string]string', entries: Object.entries(m).map(([k, v]) => [goString(k), goString(v)] as const) });
  return fnv32a(goDump({
    kind: 'ptr', type: '*state.CPUManagerCheckpoint', elem: {
      kind: 'struct', type: 'state.CPUManagerCheckpoint', fields: [
        ['PolicyName', goString(policy)],
        ['DefaultCPUSet', goString(defaultSet)],
        ['Entries', { kind: 'map', type: 'map[string]map[string]string', entries: Object.entries(entries).map(([k, v]) => [goString(k), inner(v)] as const) }],
        ['Checksum', goInt(0, 'checksum.Checksum')],
      ],
    },
  }));
}

/** The checkpoint text of a state (Go's encoding/json output: keys sorted, empty entries left out). */
export function encodeCPUCheckpoint(policy: string, defaultSet: CPUSet, assignments: Assignments): string {
  const entries: Record<string, Record<string, string>> = {};
  for (const pod of [...assignments.keys()].sort()) {
    const containers: Record<string, string> = {};
    const byName = assignments.get(pod) ?? new Map<string, CPUSet>();
    for (const name of [...byName.keys()].sort()) containers[name] = byName.get(name)?.toString() ?? '';
    entries[pod] = containers;
  }
  const checksum = checksumOf(policy, defaultSet.toString(), entries);
  return JSON.stringify({ policyName: policy, defaultCpuSet: defaultSet.toString(), ...(Object.keys(entries).length === 0 ? {} : { entries }), checksum });
}

interface Decoded {
  readonly policy: string;
  readonly defaultSet: CPUSet;
  readonly assignments: Map<string, Map<string, CPUSet>>;
}

function stringMap(value: unknown, path: string, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw checkpointError(path, `${what} is not an object`);
  return value as Record<string, unknown>;
}

/** Decodes and verifies a checkpoint. Throws CM_CHECKPOINT_FAILED. */
export function decodeCPUCheckpoint(path: string, text: string): Decoded {
  const object = parseCheckpoint(path, text);
  const policy = field(object, 'policyName');
  const defaultText = field(object, 'defaultCpuSet') ?? '';
  const checksum = field(object, 'checksum') ?? 0;
  if (typeof policy !== 'string' || typeof defaultText !== 'string' || typeof checksum !== 'number') {
    throw checkpointError(path, 'policyName, defaultCpuSet and checksum must be a string, a string and a number');
  }
  const entries: Record<string, Record<string, string>> = {};
  for (const [pod, containers] of Object.entries(stringMap(field(object, 'entries'), path, 'entries'))) {
    const byName: Record<string, string> = {};
    for (const [name, cpus] of Object.entries(stringMap(containers, path, `entries.${pod}`))) {
      if (typeof cpus !== 'string') throw checkpointError(path, `entries.${pod}.${name} is not a CPU list`);
      byName[name] = cpus;
    }
    entries[pod] = byName;
  }
  if (checksum !== 0 && checksum !== checksumOf(policy, defaultText, entries)) throw checkpointError(path, 'checkpoint is corrupted (checksum mismatch)');
  const assignments = new Map<string, Map<string, CPUSet>>();
  for (const [pod, byName] of Object.entries(entries)) {
    assignments.set(pod, new Map(Object.entries(byName).map(([name, cpus]) => [name, CPUSet.parse(cpus, `${path}: entries.${pod}.${name}`)])));
  }
  return { policy, defaultSet: CPUSet.parse(defaultText, `${path}: defaultCpuSet`), assignments };
}

class CheckpointedState implements CPUState {
  constructor(
    private readonly path: string,
    private readonly policy: string,
    private defaultSet: CPUSet,
    private readonly entries: Map<string, Map<string, CPUSet>>,
  ) {}

  store(): void {
    writeCheckpoint(this.path, encodeCPUCheckpoint(this.policy, this.defaultSet, this.entries));
  }

  defaultCPUSet(): CPUSet {
    return this.defaultSet;
  }

  setDefaultCPUSet(cpus: CPUSet): void {
    this.defaultSet = cpus;
    this.store();
  }

  cpuSet(podUID: string, container: string): CPUSet | undefined {
    return this.entries.get(podUID)?.get(container);
  }

  setCPUSet(podUID: string, container: string, cpus: CPUSet): void {
    const pod = this.entries.get(podUID) ?? new Map<string, CPUSet>();
    pod.set(container, cpus);
    this.entries.set(podUID, pod);
    this.store();
  }

  delete(podUID: string, container: string): void {
    const pod = this.entries.get(podUID);
    if (pod?.delete(container) !== true) return;
    if (pod.size === 0) this.entries.delete(podUID);
    this.store();
  }

  assignments(): Assignments {
    return this.entries;
  }
}

/**
 * The state in `<stateDir>/cpu_manager_state`, written at once when there is none. Throws
 * CM_CPU_STATE_INVALID when the file is corrupt or was written for another policy.
 */
export function openCPUState(stateDir: string, policy: string): CPUState {
  const path = join(stateDir, CPU_MANAGER_STATE_FILE);
  const fail = (problem: string, cause?: unknown): OrchError => new OrchError(CM_CPU_STATE_INVALID, 'invalid',
    `could not restore state from checkpoint: ${problem}, please drain this node and delete the CPU manager checkpoint file ${JSON.stringify(path)} before restarting the agent`,
    { subject: path, ...(cause === undefined ? {} : { cause }) });
  const text = readCheckpoint(path);
  if (text === undefined) {
    const state = new CheckpointedState(path, policy, CPUSet.EMPTY, new Map());
    state.store();
    return state;
  }
  let decoded: Decoded;
  try {
    decoded = decodeCPUCheckpoint(path, text);
  } catch (err) {
    throw fail(messageOf(err), err);
  }
  if (decoded.policy !== policy) throw fail(`configured policy ${JSON.stringify(policy)} differs from state checkpoint policy ${JSON.stringify(decoded.policy)}`);
  return new CheckpointedState(path, policy, decoded.defaultSet, decoded.assignments);
}

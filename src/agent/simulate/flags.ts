/**
 * The command line of `nodeagent simulate`: its own flags, then (after `--`) agent flags that
 * every simulated node shares (verbosity, frequencies, QPS, ...).
 */
import { OrchError } from '../../api/errors.js';
import { parseDuration } from '../../api/duration.js';
import { parseQuantity, quantityValue } from '../../api/quantity.js';
import type { OrchConnection } from '../orchclient/index.js';
import type { SimulatedCapacity } from './parts.js';

export interface SimulateTaint {
  readonly key: string;
  readonly value: string;
  readonly effect: string;
}

export interface SimulateFlags {
  readonly nodes: number;
  readonly orchconfig: string;
  readonly namePrefix: string;
  /** The index of the first node (names are `<prefix><index>`), so that several processes can share a cluster. */
  readonly firstIndex: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly SimulateTaint[];
  readonly capacity: SimulatedCapacity;
  readonly maxPods: number;
  readonly sandboxDelayMs: number;
  readonly startDelayMs: number;
  /** Nodes start evenly over this time (0: all at once). */
  readonly rampMs: number;
  /**
   * Each node sends the orchconfig's bearer token followed by `.<node name>`: the server sees
   * every node as a user of its own (as real nodes, system:node:<name>), so API Priority and
   * Fairness gives each its own flow.
   */
  readonly tokenPerNode: boolean;
  /** Agent flags for every node. */
  readonly agentArgs: readonly string[];
}

export const SIMULATE_USAGE = `Usage: nodeagent simulate --nodes N --orchconfig FILE [flags] [-- agent flags]

Runs N simulated nodes in this process against the API server of FILE: the agent's code from the
API client down over an in-memory runtime. Prints a JSON line when every node started and one
with the cost per node when it stops (SIGTERM, SIGINT).

  --nodes N                    number of nodes (required)
  --orchconfig FILE            credentials and server (required)
  --node-name-prefix P         node names are P<i> (default sim-)
  --first-index I              the first i (default 0)
  --node-labels k=v,...        labels of every node
  --register-with-taints k=v:Effect,...   taints of every node
  --cpu N --memory Q --ephemeral-storage Q --max-pods N   capacity (default 32, 256Gi, 1Ti, 110)
  --sandbox-delay D --start-delay D       how long RunPodSandbox and StartContainer take (default 0s, 1s)
  --ramp D                     start the nodes evenly over D (default 0s: at once)
  --token-per-node BOOL        node P<i> authenticates with the orchconfig's token followed by
                               ".P<i>" (a user per node, as real nodes are; default false)

Per pod (annotations): sim.orch.io/exit-after (duration), sim.orch.io/exit-code, sim.orch.io/exec-exit-code.
`;

function usage(message: string): OrchError {
  return new OrchError('SIMULATE_USAGE', 'invalid', `nodeagent simulate: ${message}`);
}

function pairs(text: string, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(',').filter((s) => s !== '')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw usage(`${flag}: ${JSON.stringify(item)} is not key=value`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

function taints(text: string): SimulateTaint[] {
  return text.split(',').filter((s) => s !== '').map((item) => {
    const colon = item.lastIndexOf(':');
    if (colon <= 0) throw usage(`--register-with-taints: ${JSON.stringify(item)} is not key[=value]:Effect`);
    const [key = '', value = ''] = item.slice(0, colon).split('=', 2);
    const effect = item.slice(colon + 1);
    if (!['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) throw usage(`--register-with-taints: unknown effect ${effect}`);
    return { key, value, effect };
  });
}

function ms(text: string, flag: string): number {
  try {
    return parseDuration(text) / 1e6;
  } catch {
    throw usage(`${flag}: ${JSON.stringify(text)} is not a duration`);
  }
}

function count(text: string, flag: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw usage(`${flag}: want an integer >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}

function bytes(text: string, flag: string): bigint {
  try {
    return BigInt(Math.round(quantityValue(parseQuantity(text, flag))));
  } catch {
    throw usage(`${flag}: ${JSON.stringify(text)} is not a quantity`);
  }
}

function bool(text: string, flag: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw usage(`${flag}: ${JSON.stringify(text)} is not true or false`);
}

/** Parses the arguments after `simulate`. Throws OrchError SIMULATE_USAGE. */
export function parseSimulateFlags(argv: readonly string[]): SimulateFlags {
  const split = argv.indexOf('--');
  const own = split < 0 ? argv : argv.slice(0, split);
  const values = new Map<string, string>();
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] ?? '';
    if (!arg.startsWith('--')) throw usage(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    let value = eq < 0 ? own[i + 1] : arg.slice(eq + 1);
    if (eq < 0) i++;
    if (value === undefined) throw usage(`--${name} needs a value`);
    value = value.trim();
    values.set(name, value);
  }
  const known = ['nodes', 'orchconfig', 'node-name-prefix', 'first-index', 'node-labels', 'register-with-taints', 'cpu', 'memory', 'ephemeral-storage',
    'max-pods', 'sandbox-delay', 'start-delay', 'ramp', 'token-per-node'];
  for (const name of values.keys()) if (!known.includes(name)) throw usage(`unknown flag --${name}`);
  const get = (name: string, fallback: string): string => values.get(name) ?? fallback;
  const nodes = values.get('nodes');
  const orchconfig = values.get('orchconfig');
  if (nodes === undefined || orchconfig === undefined || orchconfig === '') throw usage('--nodes and --orchconfig are required');
  return {
    nodes: count(nodes, '--nodes', 1),
    orchconfig,
    namePrefix: get('node-name-prefix', 'sim-'),
    firstIndex: count(get('first-index', '0'), '--first-index', 0),
    labels: pairs(get('node-labels', ''), '--node-labels'),
    taints: taints(get('register-with-taints', '')),
    capacity: {
      cores: count(get('cpu', '32'), '--cpu', 1),
      memoryBytes: bytes(get('memory', '256Gi'), '--memory'),
      ephemeralStorageBytes: bytes(get('ephemeral-storage', '1Ti'), '--ephemeral-storage'),
    },
    maxPods: count(get('max-pods', '110'), '--max-pods', 1),
    sandboxDelayMs: ms(get('sandbox-delay', '0s'), '--sandbox-delay'),
    startDelayMs: ms(get('start-delay', '1s'), '--start-delay'),
    rampMs: ms(get('ramp', '0s'), '--ramp'),
    tokenPerNode: bool(get('token-per-node', 'false'), '--token-per-node'),
    agentArgs: split < 0 ? [] : argv.slice(split + 1),
  };
}

/** A distinct IPv4 address for node `i` (10.128.0.0/9). */
export function simulatedNodeIP(i: number): string {
  const n = 0x0a800000 + (i % 0x7fffff) + 1;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * The credentials of node `name`: the orchconfig's as they are, or with --token-per-node its
 * bearer token followed by `.<name>`. Throws SIMULATE_USAGE when there is no token to extend.
 */
export function nodeConnection(connection: OrchConnection, name: string, tokenPerNode: boolean): OrchConnection {
  if (!tokenPerNode) return connection;
  if (connection.token === undefined) throw usage('--token-per-node needs an orchconfig whose user has a bearer token (token:)');
  return { ...connection, token: `${connection.token}.${name}` };
}

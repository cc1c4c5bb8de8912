/**
 * The TCP and exec probes (upstream: probe/tcp and probe/exec).
 *
 *   | probe     | success                       | failure                                         |
 *   |-----------|-------------------------------|-------------------------------------------------|
 *   | tcpSocket | a connection within the time  | dial tcp <host>:<port>: <error or i/o timeout>  |
 *   | exec      | exit code 0 (output kept)     | another exit code (its output); timeout:        |
 *   |           |                               | command "<cmd>" timed out                       |
 *
 * An exec that the runtime could not run at all is `unknown` (the worker keeps its previous
 * result), as upstream treats a probe error.
 */
import net from 'node:net';
import { isTimeout, messageOf } from '../../api/errors.js';
import type { ExecSyncRequest, ExecSyncResponse } from '../runtime/cri/index.js';
import type { ProbeOutcome } from './types.js';
import { quoteValue } from '../../api/quote.js';

/** Connects and closes at once; never rejects. */
export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const socket = net.connect({ host, port });
    const done = (outcome: ProbeOutcome): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      done({ result: 'failure', output: `dial tcp ${address}: i/o timeout` });
    }, Math.max(1, timeoutMs));
    socket.once('connect', () => {
      done({ result: 'success', output: '' });
    });
    socket.once('error', (err) => {
      done({ result: 'failure', output: `dial tcp ${address}: ${err.message}` });
    });
  });
}

/** The CRI call the exec probe and exec hooks make. */
export interface ExecRunner {
  execSync(request: ExecSyncRequest): Promise<ExecSyncResponse>;
}

/**
 * Runs `cmd` in the container with a timeout in seconds (0: none); never rejects. The output
 * is stdout then stderr, as upstream's combined output.
 */
export async function execProbe(runner: ExecRunner, containerId: string, cmd: readonly string[], timeoutSeconds: number): Promise<ProbeOutcome> {
  try {
    const res = await runner.execSync({ containerId, cmd, timeout: timeoutSeconds });
    const output = Buffer.concat([res.stdout, res.stderr]).toString('utf8');
    return { result: res.exitCode === 0 ? 'success' : 'failure', output };
  } catch (err) {
    if (isTimeout(err)) return { result: 'failure', output: `command ${quoteValue(cmd.join(' '))} timed out` };
    return { result: 'unknown', output: messageOf(err) };
  }
}

/**
 * One run of a probe of any kind (upstream: prober.runProbe): picks the handler, resolves the
 * host (the pod IP) and the port (number or container port name), applies the probe's timeout
 * and upstream's defaults for unset timings. Never rejects: a probe that cannot even be tried
 * (no pod IP, unknown port name) is `unknown` with the reason as output.
 */
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import { grpcProbe } from './grpc.js';
import { httpGet, httpTarget, PROBE_AGENT_VERSION, resolveContainerPort } from './http.js';
import { execProbe, tcpProbe, type ExecRunner } from './socket.js';
import type { ProbeOutcome } from './types.js';

/** A probe's timings with upstream's defaults applied (the API server's, for pods not defaulted). */
export interface ProbeTimings {
  readonly initialDelayMs: number;
  readonly periodMs: number;
  readonly timeoutMs: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && value > 0 ? value : fallback;
}

export function probeTimings(probe: Probe): ProbeTimings {
  return {
    initialDelayMs: Math.max(0, probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: positive(probe.periodSeconds, 10) * 1000,
    timeoutMs: positive(probe.timeoutSeconds, 1) * 1000,
    successThreshold: positive(probe.successThreshold, 1),
    failureThreshold: positive(probe.failureThreshold, 3),
  };
}

export interface ProbeTarget {
  readonly container: Container;
  readonly containerId: string;
  /** The pod's first IP ('' when unknown). */
  readonly podIP: string;
  readonly exec: ExecRunner;
}

/** Runs the probe once within its timeout. */
export async function runProbe(probe: Probe, target: ProbeTarget): Promise<ProbeOutcome> {
  const { timeoutMs } = probeTimings(probe);
  try {
    if (probe.exec !== undefined) return await execProbe(target.exec, target.containerId, probe.exec.command ?? [], timeoutMs / 1000);
    if (probe.httpGet !== undefined) {
      if (probe.httpGet.host === undefined || probe.httpGet.host === '') needIP(target.podIP);
      return await httpGet(httpTarget(probe.httpGet, target.container, target.podIP, `orch-probe/${PROBE_AGENT_VERSION}`), timeoutMs);
    }
    if (probe.tcpSocket !== undefined) {
      const host = probe.tcpSocket.host !== undefined && probe.tcpSocket.host !== '' ? probe.tcpSocket.host : needIP(target.podIP);
      return await tcpProbe(host, resolveContainerPort(probe.tcpSocket.port, target.container), timeoutMs);
    }
    if (probe.grpc !== undefined) {
      return await grpcProbe(needIP(target.podIP), resolveContainerPort(probe.grpc.port, target.container), probe.grpc.service ?? '', timeoutMs);
    }
    return { result: 'unknown', output: 'missing probe handler' };
  } catch (err) {
    return { result: 'unknown', output: err instanceof Error ? err.message : String(err) };
  }
}

function needIP(ip: string): string {
  if (ip === '') throw new Error('the pod has no IP yet');
  return ip;
}

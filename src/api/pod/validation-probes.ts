/**
 * Validation of probes (exactly one of exec, httpGet, tcpSocket, grpc; timings) and of
 * lifecycle handlers (exactly one of exec, httpGet, tcpSocket, sleep).
 */
import type { ExecAction, HTTPGetAction, Lifecycle, LifecycleHandler, Probe, TCPSocketAction } from 'kubernetes-types/core/v1.js';

import { Problems, checkEnum, checkNonNegative, checkPortNumberOrName, checkRange, setKeys } from './validation-util.js';
import { quoteValue } from '../quote.js';

const HTTP_HEADER_NAME = /^[-!#$%&'*+.^_`|~0-9A-Za-z]+$/;
const SCHEMES = ['HTTP', 'HTTPS'] as const;

function validateExec(p: Problems, path: string, exec: ExecAction): void {
  if ((exec.command ?? []).length === 0) p.add(`${path}.command`, 'is required: the command to run, as a list');
}

function validateHTTPGet(p: Problems, path: string, action: HTTPGetAction): void {
  checkPortNumberOrName(p, `${path}.port`, action.port);
  checkEnum(p, `${path}.scheme`, action.scheme, SCHEMES);
  if (action.path === undefined || action.path === '') p.add(`${path}.path`, "is required (e.g. '/healthz')");
  (action.httpHeaders ?? []).forEach((h, i) => {
    if (!HTTP_HEADER_NAME.test(h.name)) p.add(`${path}.httpHeaders[${i}].name`, `${quoteValue(h.name)} is not a valid HTTP header name`);
  });
}

function validateTCPSocket(p: Problems, path: string, action: TCPSocketAction): void {
  checkPortNumberOrName(p, `${path}.port`, action.port);
}

function describeFound(found: readonly string[]): string {
  return found.length === 0 ? 'none' : found.join(', ');
}

/** `kind` is livenessProbe, readinessProbe or startupProbe (their rules differ a little). */
export function validateProbe(p: Problems, path: string, probe: Probe, kind: 'livenessProbe' | 'readinessProbe' | 'startupProbe'): void {
  const handlers = setKeys(probe, ['exec', 'httpGet', 'tcpSocket', 'grpc']);
  if (handlers.length !== 1) {
    p.add(path, `must have exactly one handler: exec, httpGet, tcpSocket or grpc (found ${describeFound(handlers)})`);
  }
  if (probe.exec !== undefined) validateExec(p, `${path}.exec`, probe.exec);
  if (probe.httpGet !== undefined) validateHTTPGet(p, `${path}.httpGet`, probe.httpGet);
  if (probe.tcpSocket !== undefined) validateTCPSocket(p, `${path}.tcpSocket`, probe.tcpSocket);
  if (probe.grpc !== undefined) {
    const port = probe.grpc.port as number | undefined;
    if (port === undefined) p.add(`${path}.grpc.port`, 'is required: a port number from 1 to 65535');
    else checkRange(p, `${path}.grpc.port`, port, 1, 65535);
  }
  checkNonNegative(p, `${path}.initialDelaySeconds`, probe.initialDelaySeconds);
  checkNonNegative(p, `${path}.timeoutSeconds`, probe.timeoutSeconds);
  checkNonNegative(p, `${path}.periodSeconds`, probe.periodSeconds);
  checkNonNegative(p, `${path}.successThreshold`, probe.successThreshold);
  checkNonNegative(p, `${path}.failureThreshold`, probe.failureThreshold);
  if (kind !== 'readinessProbe' && probe.successThreshold !== undefined && probe.successThreshold !== 1) {
    p.add(`${path}.successThreshold`, `${probe.successThreshold} is not allowed: must be 1 for a ${kind}`);
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (grace !== undefined) {
    if (kind === 'readinessProbe') p.add(`${path}.terminationGracePeriodSeconds`, 'must not be set for a readinessProbe');
    else if (grace <= 0) p.add(`${path}.terminationGracePeriodSeconds`, `${grace} must be greater than 0`);
  }
}

function validateHandler(p: Problems, path: string, handler: LifecycleHandler): void {
  const handlers = setKeys(handler, ['exec', 'httpGet', 'tcpSocket', 'sleep']);
  if (handlers.length !== 1) {
    p.add(path, `must have exactly one handler: exec, httpGet, tcpSocket or sleep (found ${describeFound(handlers)})`);
  }
  if (handler.exec !== undefined) validateExec(p, `${path}.exec`, handler.exec);
  if (handler.httpGet !== undefined) validateHTTPGet(p, `${path}.httpGet`, handler.httpGet);
  if (handler.tcpSocket !== undefined) validateTCPSocket(p, `${path}.tcpSocket`, handler.tcpSocket);
  if (handler.sleep !== undefined && handler.sleep.seconds <= 0) {
    p.add(`${path}.sleep.seconds`, `${handler.sleep.seconds} must be greater than 0`);
  }
}

export function validateLifecycle(p: Problems, path: string, lifecycle: Lifecycle): void {
  if (lifecycle.postStart !== undefined) validateHandler(p, `${path}.postStart`, lifecycle.postStart);
  if (lifecycle.preStop !== undefined) validateHandler(p, `${path}.preStop`, lifecycle.preStop);
}

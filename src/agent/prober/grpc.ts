/**
 * The gRPC probe (upstream: probe/grpc): the standard health service, over plaintext, one
 * channel per probe, within the probe's timeout (connecting included). The messages are tiny
 * and encoded here by hand; the proto they follow is
 *
 *   syntax = "proto3";
 *   package grpc.health.v1;
 *   message HealthCheckRequest { string service = 1; }
 *   message HealthCheckResponse {
 *     enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
 *     ServingStatus status = 1;
 *   }
 *   service Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }
 *
 *   | answer                          | result  | output                                            |
 *   |---------------------------------|---------|---------------------------------------------------|
 *   | SERVING                         | success | service is serving                                |
 *   | another status                  | failure | service unhealthy (responded with "NOT_SERVING")  |
 *   | no connection within the time   | failure | timeout: failed to connect service "h:p" within.. |
 *   | UNIMPLEMENTED                   | failure | this server does not implement the grpc health .. |
 *   | DEADLINE_EXCEEDED, other errors | failure | timeout: health rpc did not complete within ...   |
 */
import { Client, credentials, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { PROBE_AGENT_VERSION } from './http.js';
import type { ProbeOutcome } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const HEALTH_CHECK_METHOD = '/grpc.health.v1.Health/Check';
export const SERVING_STATUSES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;
export type ServingStatus = (typeof SERVING_STATUSES)[number];

function varint(value: number): number[] {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return bytes;
}

/** Reads a varint at `offset`: [value, next offset]. Throws when the buffer ends inside it. */
function readVarint(buf: Buffer, offset: number): [number, number] {
  let value = 0;
  let shift = 0;
  let i = offset;
  for (;;) {
    const byte = buf[i++];
    if (byte === undefined) throw new Error('truncated varint');
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, i];
    shift += 7;
  }
}

/** The messages' wire format, both ways (the client side here, the server side in tests). */
export const healthCodec = {
  encodeRequest(service: string): Buffer {
    const text = Buffer.from(service, 'utf8');
    return text.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, ...varint(text.length)]), text]);
  },
  decodeRequest(buf: Buffer): string {
    let i = 0;
    let service = '';
    while (i < buf.length) {
      const [tag, next] = readVarint(buf, i);
      i = next;
      if (tag >> 3 === 1 && (tag & 7) === 2) {
        const [length, start] = readVarint(buf, i);
        service = buf.subarray(start, start + length).toString('utf8');
        i = start + length;
      } else throw new Error(`unexpected field tag ${tag} in HealthCheckRequest`);
    }
    return service;
  },
  encodeResponse(status: ServingStatus): Buffer {
    const n = SERVING_STATUSES.indexOf(status);
    return n === 0 ? Buffer.alloc(0) : Buffer.from([0x08, ...varint(n)]);
  },
  decodeResponse(buf: Buffer): ServingStatus {
    let i = 0;
    let value = 0;
    while (i < buf.length) {
      const [tag, next] = readVarint(buf, i);
      if ((tag & 7) !== 0) throw new Error(`unexpected wire type in HealthCheckResponse (tag ${tag})`);
      const [v, after] = readVarint(buf, next);
      if (tag >> 3 === 1) value = v;
      i = after;
    }
    return SERVING_STATUSES[value] ?? 'UNKNOWN';
  },
};

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof Reflect.get(err, 'code') === 'number';
}

function waitForReady(client: Client, deadline: Date): Promise<Error | undefined> {
  return new Promise((resolve) => {
    client.waitForReady(deadline, (err) => {
      resolve(err);
    });
  });
}

function check(client: Client, service: string, deadline: Date): Promise<ServingStatus> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(HEALTH_CHECK_METHOD, (s: string) => healthCodec.encodeRequest(s), (b: Buffer) => healthCodec.decodeResponse(b), service, new Metadata(), { deadline }, (err, res) => {
      if (err !== null || res === undefined) reject(err ?? new Error('empty health response'));
      else resolve(res);
    });
  });
}

/** One health check of `service` ('' for the server as a whole) at host:port; never rejects. */
export async function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeOutcome> {
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const seconds = `${timeoutMs / 1000}s`;
  const deadline = new Date(Date.now() + Math.max(1, timeoutMs));
  const client = new Client(address, credentials.createInsecure(), {
    'grpc.primary_user_agent': `orch-probe/${PROBE_AGENT_VERSION}`,
    'grpc.enable_retries': 0,
    'grpc.max_reconnect_backoff_ms': Math.max(100, timeoutMs),
  });
  try {
    const connectError = await waitForReady(client, deadline);
    if (connectError !== undefined) {
      return { result: 'failure', output: `timeout: failed to connect service ${quoteValue(address)} within ${seconds}: ${connectError.message}` };
    }
    const served = await check(client, service, deadline);
    if (served !== 'SERVING') return { result: 'failure', output: `service unhealthy (responded with ${quoteValue(served)})` };
    return { result: 'success', output: 'service is serving' };
  } catch (err) {
    if (isServiceError(err)) {
      if (err.code === GrpcStatus.UNIMPLEMENTED) {
        return { result: 'failure', output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}` };
      }
      if (err.code === GrpcStatus.DEADLINE_EXCEEDED) return { result: 'failure', output: `timeout: health rpc did not complete within ${seconds}` };
    }
    return { result: 'failure', output: `error: health rpc probe failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    client.close();
  }
}

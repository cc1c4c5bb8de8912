/**
 * An OTLP/gRPC trace receiver for the tests: a gRPC server of
 * opentelemetry.proto.collector.trace.v1.TraceService built from the official proto definitions
 * (proto/opentelemetry), on a free loopback port, keeping every span it is sent as a plain
 * record (IDs in hex, attributes as plain values).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server, ServerCredentials, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const PROTO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../proto');

export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly kind: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export interface OtlpReceiver {
  /** host:port, as the agent's tracing.endpoint takes it. */
  readonly endpoint: string;
  spans(): readonly ReceivedSpan[];
  close(): Promise<void>;
}

interface AnyValue { stringValue?: string; boolValue?: boolean; intValue?: string; doubleValue?: number; value?: string }
interface KeyValue { key: string; value: AnyValue | null }
interface RawSpan { traceId: Buffer; spanId: Buffer; parentSpanId: Buffer; name: string; kind: string; attributes: KeyValue[] }
interface ExportRequest {
  resourceSpans: { resource: { attributes: KeyValue[] } | null; scopeSpans: { scope: { name: string } | null; spans: RawSpan[] }[] }[];
}

function plain(v: AnyValue | null): unknown {
  if (v === null) return undefined;
  switch (v.value) {
    case 'stringValue': return v.stringValue;
    case 'boolValue': return v.boolValue;
    case 'intValue': return Number(v.intValue);
    case 'doubleValue': return v.doubleValue;
    default: return undefined;
  }
}

function attributesOf(list: readonly KeyValue[]): Record<string, unknown> {
  return Object.fromEntries(list.map((kv) => [kv.key, plain(kv.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const definition = loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', {
    includeDirs: [PROTO_ROOT], keepCase: false, longs: String, enums: String, defaults: true, oneofs: true,
  });
  const service = definition['opentelemetry.proto.collector.trace.v1.TraceService'] as ServiceDefinition;
  const received: ReceivedSpan[] = [];
  const server = new Server();
  server.addService(service, {
    Export: (call: ServerUnaryCall<ExportRequest, unknown>, callback: sendUnaryData<unknown>) => {
      for (const rs of call.request.resourceSpans) {
        const named = attributesOf(rs.resource?.attributes ?? [])['service.name'];
        const serviceName = typeof named === 'string' ? named : '';
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            received.push({
              service: serviceName, scope: ss.scope?.name ?? '', name: s.name, kind: s.kind,
              traceId: s.traceId.toString('hex'), spanId: s.spanId.toString('hex'), parentSpanId: s.parentSpanId.toString('hex'),
              attributes: attributesOf(s.attributes),
            });
          }
        }
      }
      callback(null, {});
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => { if (err === null) resolve(p); else reject(err); });
  });
  return {
    endpoint: `127.0.0.1:${port}`,
    spans: () => received,
    close: () => new Promise<void>((resolve) => { server.tryShutdown(() => { resolve(); }); }),
  };
}

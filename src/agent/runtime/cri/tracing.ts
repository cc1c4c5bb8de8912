/**
 * What a CRI call's span says (as upstream's gRPC client instrumentation names it,
 * `runtime.v1.RuntimeService/RunPodSandbox`): the RPC, and the pod, container, sandbox and
 * image the request names, where it names them; the gRPC status code once it ended.
 */
import { Metadata } from '@grpc/grpc-js';
import type { SpanAttributes, SpanOptions, Tracer } from '../../../api/tracing/index.js';
import type { CriServiceName } from './proto.js';

const PACKAGE = 'runtime.v1';

export function criSpanName(service: CriServiceName, method: string): string {
  return `${PACKAGE}.${service}/${method}`;
}

function field(obj: unknown, name: string): unknown {
  return typeof obj === 'object' && obj !== null ? Reflect.get(obj, name) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The pod, container, sandbox and image a CRI request names. */
export function criRequestAttributes(method: string, request: object): SpanAttributes {
  const config = field(request, 'config');
  // RunPodSandbox's config is the sandbox's; CreateContainer's is the container's, with the sandbox's beside it.
  const sandbox = method === 'RunPodSandbox';
  const pod = field(sandbox ? config : field(request, 'sandboxConfig'), 'metadata');
  const container = sandbox ? undefined : field(config, 'metadata');
  return {
    'k8s.pod.name': text(field(pod, 'name')),
    'k8s.namespace.name': text(field(pod, 'namespace')),
    'k8s.pod.uid': text(field(pod, 'uid')),
    'k8s.container.name': text(field(container, 'name')),
    'cri.pod_sandbox.id': text(field(request, 'podSandboxId')),
    'container.id': text(field(request, 'containerId')),
    'container.image.name': text(field(field(request, 'image'), 'image')),
  };
}

export function criSpanOptions(service: CriServiceName, method: string, request: object): SpanOptions {
  return {
    kind: 'client',
    attributes: { 'rpc.system': 'grpc', 'rpc.service': `${PACKAGE}.${service}`, 'rpc.method': method, ...criRequestAttributes(method, request) },
  };
}

/** The gRPC status code of a failed call; UNKNOWN (2) when the failure carries none (the call never left). */
export function grpcCodeOf(err: unknown): number {
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; e = field(e, 'cause'), depth++) {
    const code = field(e, 'code');
    if (typeof code === 'number') return code;
  }
  return 2; // UNKNOWN
}

/** One CRI call in its client span, its trace context sent as gRPC metadata (as upstream's instrumentation sends it). */
export function tracedCriCall<Res>(tracer: Tracer, service: CriServiceName, method: string, request: object, send: (metadata: Metadata) => Promise<Res>): Promise<Res> {
  return tracer.inSpan(criSpanName(service, method), criSpanOptions(service, method, request), async (span) => {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(tracer.outgoingHeaders())) metadata.set(key, value);
    try {
      const res = await send(metadata);
      span.setAttributes({ 'rpc.grpc.status_code': 0 });
      return res;
    } catch (err) {
      span.setAttributes({ 'rpc.grpc.status_code': grpcCodeOf(err) });
      throw err;
    }
  });
}

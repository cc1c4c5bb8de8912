/**
 * The pod resources gRPC server (upstream: ListenAndServePodResources with the v1 server and its
 * rate limiter). Every call takes a token of one bucket (upstream's DefaultQPS 100 and
 * DefaultBurstTokens 10); a call beyond it is answered RESOURCE_EXHAUSTED "rejected by rate
 * limit", as upstream's interceptor answers.
 */
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type ServiceClientConstructor, type GrpcObject } from '@grpc/grpc-js';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { grpcPackage } from '../../api/grpc-proto.js';
import type { NodePod } from '../../api/pod/index.js';
import { createTokenBucket } from '../../api/token-bucket.js';
import type { DevicePodResources, ResourceAssignments } from '../cm/index.js';
import type { Logger } from '../logging/index.js';
import { allocatableResources, podResources, type AnswerSources } from './answers.js';

/** The pod resources socket cannot be served. */
export const PODRESOURCES_SERVER_FAILED = 'PODRESOURCES_SERVER_FAILED';
export const POD_RESOURCES_SOCKET = 'nodeagent.sock';
export const POD_RESOURCES_QPS = 100;
export const POD_RESOURCES_BURST = 10;
const PROTO = 'podresources-v1.proto';

export interface PodResourcesSources {
  /** The pods the agent knows (upstream: the pod manager's pods). */
  pods(): readonly NodePod[];
  readonly devices: DevicePodResources;
  /** The CPU and memory managers' assignments. */
  assignments(): ResourceAssignments;
}

export interface PodResourcesServerOptions {
  /** The pod-resources directory (`<root-dir>/pod-resources`). */
  readonly dir: string;
  readonly sources: PodResourcesSources;
  readonly gates: { enabled(name: string): boolean };
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface PodResourcesServer {
  readonly socketPath: string;
  /** Serves (a stale socket is replaced). Throws PODRESOURCES_SERVER_FAILED. */
  start(): Promise<void>;
  /** Stops serving and removes the socket. Idempotent. */
  stop(): Promise<void>;
}

type Handler = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

export function createPodResourcesServer(options: PodResourcesServerOptions): PodResourcesServer {
  const { sources, gates } = options;
  const log = options.logger;
  const socketPath = path.join(options.dir, POD_RESOURCES_SOCKET);
  const bucket = createTokenBucket({ qps: POD_RESOURCES_QPS, burst: POD_RESOURCES_BURST, clock: options.clock });
  const answers = (): AnswerSources => ({ devices: sources.devices, assignments: () => sources.assignments(), sidecarContainers: gates.enabled('SidecarContainers') });
  let server: Server | undefined;

  /** The rate limit and error answers around a method. */
  const method = (name: string, answer: (request: unknown) => unknown): Handler => (call, callback) => {
    if (!bucket.tryTake()) {
      callback({ code: status.RESOURCE_EXHAUSTED, details: 'rejected by rate limit' });
      return;
    }
    try {
      callback(null, answer(call.request));
    } catch (err) {
      log.warn('Pod resources call failed', { method: name, err: messageOf(err) });
      callback({ code: err instanceof OrchError && err.category === 'not-found' ? status.NOT_FOUND : status.UNKNOWN, details: messageOf(err) });
    }
  };

  const implementation: Record<string, Handler> = {
    List: method('List', () => {
      sources.devices.updateAllocated();
      return { podResources: sources.pods().map((p) => podResources(p, answers())) };
    }),
    GetAllocatableResources: method('GetAllocatableResources', () => allocatableResources(answers())),
    Get: method('Get', (request) => {
      if (!gates.enabled('NodeagentPodResourcesGet')) {
        throw new OrchError('PODRESOURCES_GET_DISABLED', 'forbidden', 'PodResources API Get method disabled: the NodeagentPodResourcesGet feature gate is off');
      }
      const field = (key: string): string => {
        const v: unknown = typeof request === 'object' && request !== null ? Reflect.get(request, key) : undefined;
        return typeof v === 'string' ? v : '';
      };
      const name = field('podName');
      const namespace = field('podNamespace');
      const pod = sources.pods().find((p) => p.metadata.name === name && p.metadata.namespace === namespace);
      if (pod === undefined) throw new OrchError('PODRESOURCES_POD_NOT_FOUND', 'not-found', `pod ${name} in namespace ${namespace} not found`, { subject: `${namespace}/${name}` });
      sources.devices.updateAllocated();
      return { podResources: podResources(pod, answers()) };
    }),
  };

  return {
    socketPath,
    async start() {
      try {
        await mkdir(options.dir, { recursive: true, mode: 0o750 });
        await rm(socketPath, { force: true });
        const pkg = grpcPackage(PROTO)['v1'] as GrpcObject;
        const s = new Server();
        s.addService((pkg['PodResourcesLister'] as ServiceClientConstructor).service, implementation);
        await new Promise<void>((resolve, reject) => {
          s.bindAsync(`unix:${socketPath}`, ServerCredentials.createInsecure(), (err) => {
            if (err === null) resolve();
            else reject(err);
          });
        });
        server = s;
      } catch (err) {
        throw new OrchError(PODRESOURCES_SERVER_FAILED, 'unavailable', `cannot serve the pod resources API on ${socketPath}: ${messageOf(err)}`, { subject: socketPath, cause: err });
      }
      log.info('Serving the pod resources API', { socket: socketPath });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (s === undefined) return;
      s.forceShutdown();
      await rm(socketPath, { force: true }).catch((err: unknown) => {
        log.warn('Cannot remove the pod resources socket', { path: socketPath, err: messageOf(err) });
      });
    },
  };
}

/**
 * The agent's client of one device plugin (upstream: plugin/v1beta1/client.go and endpoint.go):
 * the gRPC channel to the plugin's socket, dialled with a 10 s limit as upstream's, and the
 * plugin's methods as promises. Every call has a deadline, so that a plugin that stops answering
 * fails the one admission or container start waiting for it rather than holding the agent:
 *
 *   | call                    | deadline | upstream                     |
 *   |-------------------------|----------|------------------------------|
 *   | GetDevicePluginOptions  | 10 s     | none                         |
 *   | GetPreferredAllocation  | 30 s     | none                         |
 *   | Allocate                | 30 s     | none                         |
 *   | PreStartContainer       | 30 s     | 30 s                         |
 *
 * ListAndWatch is a stream without deadline; `watch` resolves when it ends, with the reason.
 */
import { Metadata, credentials, type Client, type ClientReadableStream } from '@grpc/grpc-js';
import { OrchError } from '../../../api/errors.js';
import { grpcErrorText, unaryCall } from '../../../api/grpc-proto.js';
import { containerAllocationOf, devicePluginServices, type ContainerAllocation, type PluginOptions } from './api.js';

/** A device plugin's socket cannot be reached or did not answer GetDevicePluginOptions. */
export const DEVICE_PLUGIN_UNREACHABLE = 'DEVICE_PLUGIN_UNREACHABLE';
/** A device plugin's call failed (an error answer, or no answer before the deadline). */
export const DEVICE_PLUGIN_CALL_FAILED = 'DEVICE_PLUGIN_CALL_FAILED';

export const DIAL_TIMEOUT_MS = 10_000;
export const OPTIONS_DEADLINE_MS = 10_000;
export const ALLOCATE_DEADLINE_MS = 30_000;
/** upstream's KubeletPreStartContainerRPCTimeoutInSecs. */
export const PRE_START_DEADLINE_MS = 30_000;

/** The calls the agent makes to one plugin. */
export interface DevicePluginClient {
  readonly resource: string;
  /** The plugin's socket. */
  readonly socketPath: string;
  options(): Promise<PluginOptions>;
  /**
   * Opens ListAndWatch and hands each answer to `onAnswer` (unchecked, as decoded); resolves,
   * with the reason, once the stream ends (the plugin stopped, closed it, or the client closed).
   */
  watch(onAnswer: (answer: unknown) => void): Promise<string>;
  /** Allocate for one container; the container's answer. */
  allocate(deviceIds: readonly string[]): Promise<ContainerAllocation>;
  /** GetPreferredAllocation for one container; the devices the plugin prefers. */
  preferredAllocation(available: readonly string[], mustInclude: readonly string[], size: number): Promise<string[]>;
  preStartContainer(deviceIds: readonly string[]): Promise<void>;
  /** Closes the channel (an open ListAndWatch ends). Idempotent. */
  close(): void;
}

/** Makes a client for the plugin of `resource` on `socketPath`, once its socket answers. */
export type PluginDialer = (resource: string, socketPath: string) => Promise<DevicePluginClient>;

function callFailed(resource: string, method: string, err: unknown): OrchError {
  return new OrchError(DEVICE_PLUGIN_CALL_FAILED, 'unavailable', `device plugin ${resource}: ${method} failed: ${grpcErrorText(err)}`, { subject: resource, cause: err });
}

function waitForReady(client: Client, deadlineMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    client.waitForReady(new Date(Date.now() + deadlineMs), (err) => {
      if (err === undefined) resolve();
      else reject(err);
    });
  });
}

/** The dialler of real plugins over their unix sockets. Throws DEVICE_PLUGIN_UNREACHABLE when the socket does not answer in 10 s. */
export const dialDevicePlugin: PluginDialer = async (resource, socketPath) => {
  const { plugin: Constructor } = devicePluginServices();
  const client = new Constructor(`unix://${socketPath}`, credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  try {
    await waitForReady(client, DIAL_TIMEOUT_MS);
  } catch (err) {
    client.close();
    throw new OrchError(DEVICE_PLUGIN_UNREACHABLE, 'unavailable', `failed to dial device plugin ${resource} at ${socketPath}: ${grpcErrorText(err)}`, { subject: socketPath, cause: err });
  }
  const call = async <T>(method: string, request: object, deadlineMs: number): Promise<T> => {
    try {
      return await unaryCall<T>(client, method, request, new Metadata(), deadlineMs);
    } catch (err) {
      throw callFailed(resource, method, err);
    }
  };
  let closed = false;
  // A closed channel lets calls under way finish: the open stream is cancelled explicitly.
  const streams = new Set<ClientReadableStream<unknown>>();
  return {
    resource,
    socketPath,
    async options() {
      const o = await call<{ preStartRequired?: boolean; getPreferredAllocationAvailable?: boolean }>('GetDevicePluginOptions', {}, OPTIONS_DEADLINE_MS);
      return { preStartRequired: o.preStartRequired === true, getPreferredAllocationAvailable: o.getPreferredAllocationAvailable === true };
    },
    watch(onAnswer) {
      return new Promise<string>((resolve) => {
        if (closed) {
          resolve('the client is closed');
          return;
        }
        const stream = (Reflect.get(client, 'ListAndWatch') as (req: object) => ClientReadableStream<unknown>).call(client, {});
        streams.add(stream);
        const ended = (reason: string): void => {
          streams.delete(stream);
          resolve(reason);
        };
        stream.on('data', (answer: unknown) => { onAnswer(answer); });
        stream.on('error', (err: unknown) => { ended(grpcErrorText(err)); });
        stream.on('end', () => { ended('the plugin ended the stream'); });
      });
    },
    async allocate(deviceIds) {
      const answer = await call<{ containerResponses?: unknown[] }>('Allocate', { containerRequests: [{ devicesIds: deviceIds }] }, ALLOCATE_DEADLINE_MS);
      const first = answer.containerResponses?.[0];
      if (first === undefined) throw callFailed(resource, 'Allocate', new Error(`no containers return in allocation response ${JSON.stringify(answer)}`));
      return containerAllocationOf(first);
    },
    async preferredAllocation(available, mustInclude, size) {
      const answer = await call<{ containerResponses?: { deviceIDs?: string[] }[] }>('GetPreferredAllocation', {
        containerRequests: [{ availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size }],
      }, ALLOCATE_DEADLINE_MS);
      return answer.containerResponses?.[0]?.deviceIDs ?? [];
    },
    async preStartContainer(deviceIds) {
      await call('PreStartContainer', { devicesIds: deviceIds }, PRE_START_DEADLINE_MS);
    },
    close() {
      if (closed) return;
      closed = true;
      for (const stream of streams) stream.cancel();
      client.close();
    },
  };
};

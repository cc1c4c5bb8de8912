/**
 * The agent's client of a plugin's registration socket (pluginregistration v1): GetInfo and
 * NotifyRegistrationStatus, with upstream's limits (10 s to connect, 1 s for GetInfo, 5 s for
 * the notification).
 */
import { Metadata, credentials, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { grpcErrorText, grpcPackage, unaryCall } from '../../api/grpc-proto.js';

export const PLUGIN_REGISTRATION_PROTO = 'pluginregistration-v1.proto';
export const DIAL_TIMEOUT_MS = 10_000;
export const GET_INFO_DEADLINE_MS = 1_000;
export const NOTIFY_DEADLINE_MS = 5_000;

/** What a plugin says about itself (PluginInfo). */
export interface PluginInfo {
  readonly type: string;
  readonly name: string;
  /** Empty: the registration socket itself. */
  readonly endpoint: string;
  readonly supportedVersions: readonly string[];
}

/** The calls the plugin watcher makes on one registration socket. */
export interface RegistrationClient {
  getInfo(): Promise<PluginInfo>;
  notifyRegistrationStatus(registered: boolean, error: string): Promise<void>;
  close(): void;
}

/** Connects to the registration socket at a path; rejects when it does not answer in 10 s. */
export type RegistrationDialer = (socketPath: string) => Promise<RegistrationClient>;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export const dialRegistration: RegistrationDialer = async (socketPath) => {
  const pkg = grpcPackage(PLUGIN_REGISTRATION_PROTO)['pluginregistration'] as GrpcObject;
  const Constructor = pkg['Registration'] as ServiceClientConstructor;
  const client = new Constructor(`unix://${socketPath}`, credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  await new Promise<void>((resolve, reject) => {
    client.waitForReady(new Date(Date.now() + DIAL_TIMEOUT_MS), (err) => {
      if (err === undefined) resolve();
      else {
        client.close();
        reject(new Error(`failed to dial socket ${socketPath}, err: ${grpcErrorText(err)}`));
      }
    });
  });
  return {
    async getInfo() {
      const info = await unaryCall<Record<string, unknown>>(client, 'GetInfo', {}, new Metadata(), GET_INFO_DEADLINE_MS);
      const text = (key: string): string => (typeof info[key] === 'string' ? info[key] : '');
      return { type: text('type'), name: text('name'), endpoint: text('endpoint'), supportedVersions: strings(info['supportedVersions']) };
    },
    async notifyRegistrationStatus(registered, error) {
      await unaryCall(client, 'NotifyRegistrationStatus', { pluginRegistered: registered, error }, new Metadata(), NOTIFY_DEADLINE_MS);
    },
    close() {
      client.close();
    },
  };
};

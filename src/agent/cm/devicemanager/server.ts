/**
 * The device plugin registration server (upstream: plugin/v1beta1/server.go): serves
 * `v1beta1.Registration/Register` on `<device-plugins dir>/nodeagent.sock`. At start the
 * directory is made and every stale socket in it removed (the checkpoint and other files stay),
 * so that plugins see the agent's socket come back and register again. A registration is
 * answered once the plugin is connected, or with the reason it is not.
 */
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { OrchError, isInvalid, messageOf } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { REGISTRATION_SOCKET, devicePluginServices } from './api.js';

/** The registration socket cannot be served (the agent does not start). */
export const DEVICE_REGISTRATION_SERVER_FAILED = 'DEVICE_REGISTRATION_SERVER_FAILED';
/** A registration request is refused (wrong version, resource name or endpoint). */
export const DEVICE_REGISTRATION_INVALID = 'DEVICE_REGISTRATION_INVALID';

export interface RegisterRequest {
  readonly version: string;
  readonly endpoint: string;
  readonly resourceName: string;
  readonly options: { readonly preStartRequired: boolean; readonly getPreferredAllocationAvailable: boolean } | undefined;
}

export interface RegistrationServerOptions {
  /** The device-plugins directory. */
  readonly dir: string;
  /** Files in the directory that stay at start besides non-sockets (the checkpoint). */
  readonly keep: readonly string[];
  readonly logger: Logger;
  /** Registers the plugin; rejects with the reason it is refused (an invalid-category error: a bad request). */
  readonly register: (request: RegisterRequest) => Promise<void>;
}

export interface RegistrationServer {
  /** The socket path. */
  readonly socketPath: string;
  /** Makes the directory, removes stale sockets and serves. Throws DEVICE_REGISTRATION_SERVER_FAILED. */
  start(): Promise<void>;
  /** Stops serving and removes the socket. Idempotent. */
  stop(): Promise<void>;
}

function requestOf(raw: unknown): RegisterRequest {
  const get = (key: string): unknown => (typeof raw === 'object' && raw !== null ? Reflect.get(raw, key) : undefined);
  const str = (key: string): string => { const v = get(key); return typeof v === 'string' ? v : ''; };
  const o = get('options');
  const flag = (key: string): boolean => typeof o === 'object' && o !== null && Reflect.get(o, key) === true;
  return {
    version: str('version'), endpoint: str('endpoint'), resourceName: str('resourceName'),
    options: o === null || o === undefined ? undefined : { preStartRequired: flag('preStartRequired'), getPreferredAllocationAvailable: flag('getPreferredAllocationAvailable') },
  };
}

/** Removes the sockets in `dir` but those named in `keep`; other files and directories stay. */
async function removeStaleSockets(dir: string, keep: readonly string[], log: Logger): Promise<void> {
  for (const name of await readdir(dir)) {
    if (keep.includes(name)) continue;
    const file = path.join(dir, name);
    try {
      if ((await lstat(file)).isSocket()) await rm(file, { force: true });
    } catch (err) {
      log.warn('Cannot remove a stale socket of the device-plugins directory', { path: file, err: messageOf(err) });
    }
  }
}

export function createRegistrationServer(options: RegistrationServerOptions): RegistrationServer {
  const log = options.logger;
  const socketPath = path.join(options.dir, REGISTRATION_SOCKET);
  let server: Server | undefined;

  const register = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
    const request = requestOf(call.request);
    log.info('Got registration request from device plugin', { resourceName: request.resourceName, endpoint: request.endpoint, version: request.version });
    options.register(request).then(() => { callback(null, {}); }, (err: unknown) => {
      log.warn('Device plugin registration refused', { resourceName: request.resourceName, err: messageOf(err) });
      callback({ code: isInvalid(err) ? status.INVALID_ARGUMENT : status.UNAVAILABLE, details: messageOf(err) });
    });
  };

  return {
    socketPath,
    async start() {
      try {
        await mkdir(options.dir, { recursive: true, mode: 0o750 });
        await removeStaleSockets(options.dir, options.keep, log);
        await rm(socketPath, { force: true });
        const s = new Server();
        s.addService(devicePluginServices().registration, { Register: register });
        await new Promise<void>((resolve, reject) => {
          s.bindAsync(`unix:${socketPath}`, ServerCredentials.createInsecure(), (err) => {
            if (err === null) resolve();
            else reject(err);
          });
        });
        server = s;
      } catch (err) {
        throw new OrchError(DEVICE_REGISTRATION_SERVER_FAILED, 'unavailable', `cannot serve device plugin registrations on ${socketPath}: ${messageOf(err)}`, { subject: socketPath, cause: err });
      }
      log.info('Serving device plugin registration server', { socket: socketPath });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (s === undefined) return;
      s.forceShutdown();
      await rm(socketPath, { force: true }).catch((err: unknown) => {
        log.warn('Cannot remove the device plugin registration socket', { path: socketPath, err: messageOf(err) });
      });
    },
  };
}

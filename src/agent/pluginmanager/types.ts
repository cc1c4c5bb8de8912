/**
 * The plugin watcher's contract with the components that take plugins (upstream:
 * pluginmanager/cache.PluginHandler). A component registers one handler per plugin type it
 * takes (`DevicePlugin` for the device manager, `CSIPlugin` for CSI drivers) with `addHandler`;
 * the watcher then calls it for each plugin of that type that appears or goes away under
 * `<root-dir>/plugins_registry/`. The handler knows nothing of sockets in that directory: it
 * gets the plugin's name, the endpoint it serves its own API on, and the API versions it speaks.
 */

/** Plugin types of the registration API (PluginInfo.type). */
export const DEVICE_PLUGIN_TYPE = 'DevicePlugin';
export const CSI_PLUGIN_TYPE = 'CSIPlugin';

export interface PluginHandler {
  /**
   * Whether the plugin may register: throws (or rejects) with the reason when not (an
   * unsupported version, a bad name). The reason is sent to the plugin, and the watcher tries
   * again later with back-off. Must not keep anything: registration follows.
   */
  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void | Promise<void>;
  /**
   * Takes the plugin (connects to `endpoint`, an absolute socket path). Rejects with the reason
   * when it cannot; the plugin is told, and is not tried again until its socket is made again.
   * Called once per appearance of the socket, never twice at once for one socket.
   */
  registerPlugin(name: string, endpoint: string, versions: readonly string[]): Promise<void>;
  /**
   * The plugin's registration socket went away (or was made again: a registration follows).
   * Called only after registerPlugin was called for it. Errors are logged.
   */
  deregisterPlugin(name: string, endpoint: string): void | Promise<void>;
}

/** A plugin the watcher registered with its handler. */
export interface RegisteredPlugin {
  /** The registration socket. */
  readonly path: string;
  readonly type: string;
  readonly name: string;
  readonly endpoint: string;
}

export interface PluginManager {
  /** Adds the handler of plugins of `type` (before start, or plugins of that type are refused until then). */
  addHandler(type: string, handler: PluginHandler): void;
  /** Makes the directory and starts watching it. Rejects when the directory cannot be made. */
  start(): Promise<void>;
  /** Stops watching and waits for the operations under way; registered plugins stay registered with their handlers. */
  stop(): Promise<void>;
  /** The plugins registered now. */
  registered(): RegisteredPlugin[];
  /** Resolves once the pass and the operations under way have ended (tests use it). */
  settled(): Promise<void>;
}

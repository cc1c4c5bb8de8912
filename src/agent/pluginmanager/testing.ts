/**
 * The plugin manager's test-only entry: FakePlugins, registration sockets answered in memory
 * (tests make the socket files themselves; the dialler answers by path).
 */
import type { PluginInfo, RegistrationClient, RegistrationDialer } from './client.js';

export interface FakePlugin {
  info: PluginInfo;
  /** GetInfo fails with this message. */
  getInfoError?: string;
  /** Every NotifyRegistrationStatus: [registered, error]. */
  readonly notifications: [boolean, string][];
}

export class FakePlugins {
  readonly plugins = new Map<string, FakePlugin>();
  dials = 0;

  add(path: string, info: Partial<PluginInfo>): FakePlugin {
    const plugin: FakePlugin = { info: { type: 'DevicePlugin', name: 'example.com/dev', endpoint: '', supportedVersions: ['v1beta1'], ...info }, notifications: [] };
    this.plugins.set(path, plugin);
    return plugin;
  }

  readonly dial: RegistrationDialer = (path) => {
    this.dials++;
    const plugin = this.plugins.get(path);
    if (plugin === undefined) return Promise.reject(new Error(`failed to dial socket ${path}, err: connection refused`));
    const client: RegistrationClient = {
      getInfo: () => (plugin.getInfoError === undefined ? Promise.resolve(plugin.info) : Promise.reject(new Error(plugin.getInfoError))),
      notifyRegistrationStatus: (registered, error) => {
        plugin.notifications.push([registered, error]);
        return Promise.resolve();
      },
      close: () => undefined,
    };
    return Promise.resolve(client);
  };
}

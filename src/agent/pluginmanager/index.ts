/**
 * pluginmanager: the plugin watcher (upstream: pkg/kubelet/pluginmanager, registration API
 * pluginregistration v1). Plugins put a unix socket under `<root-dir>/plugins_registry/` (at
 * any depth; names starting with '.' are skipped); the watcher asks each for its info, hands it
 * to the handler of its type, and tells it the outcome. A socket made again registers again; a
 * removed one deregisters. Handlers are added by the components that take plugins (the device
 * manager: DevicePlugin; CSI: CSIPlugin) through the small PluginHandler interface.
 *
 * It owns: the plugins_registry directory (made at start), the registration sockets' clients,
 * which plugins are registered, and the retries. It must not: create or remove files under the
 * directory (plugins own their sockets), talk to a plugin's own API (its handler does), or know
 * any plugin type's rules (validation is the handler's).
 */
export { DIAL_TIMEOUT_MS, GET_INFO_DEADLINE_MS, NOTIFY_DEADLINE_MS, dialRegistration, type PluginInfo, type RegistrationClient, type RegistrationDialer } from './client.js';
export { BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, RECONCILE_PERIOD_MS, createPluginManager, type PluginManagerOptions } from './manager.js';
export { CSI_PLUGIN_TYPE, DEVICE_PLUGIN_TYPE, type PluginHandler, type PluginManager, type RegisteredPlugin } from './types.js';

/**
 * credentialprovider: image credential provider plugins (upstream: the kubelet's
 * pkg/credentialprovider/plugin) and the keyring of one pull. For a repository matching a
 * provider's `matchImages` (globs in host parts, ports equal, path prefix), the provider's
 * plugin runs with a CredentialProviderRequest on stdin; its CredentialProviderResponse is
 * cached by `cacheKeyType` and `cacheDuration`. The keyring tries the pod's pull secrets, then
 * the plugins' credentials.
 *
 * Owns: running plugins, decoding and caching their answers, the order of a pull's
 * credentials, and the event of a failed plugin. Must not: pull images (kuberuntime does), read
 * secrets (apipods does), or parse the config file (config does).
 */
export { imageMatches, registryOf } from './match.js';
export {
  CREDENTIAL_PROVIDER_PLUGIN_FAILED, CREDENTIAL_PROVIDER_RESPONSE_INVALID, PLUGIN_TIMEOUT_MS, execPlugin,
  type CacheKeyType, type PluginExec, type PluginResponse, type PluginRun,
} from './plugin.js';
export {
  CREDENTIAL_PROVIDER_PLUGIN_MISSING, checkPluginBinaries, createCredentialProviders, loadCredentialProviders,
  type CredentialProviders, type CredentialProvidersOptions, type PluginFailure,
} from './providers.js';
export { CREDENTIAL_PROVIDER_FAILED_REASON, pullKeyring, type PullKeyringOptions } from './keyring.js';

/**
 * The credential providers of --image-credential-provider-config (upstream: the plugin
 * providers of the default keyring). A pull of a repository that matches a provider's
 * `matchImages` asks that provider; its answer is cached by the response's `cacheKeyType`
 * (Image: the repository; Registry: its host; Global: one entry for everything) for the
 * response's `cacheDuration`, else the provider's `defaultCacheDuration` (0: not cached). Runs
 * for the same provider and repository at once share one plugin run. A failed run is reported
 * to the caller and gives no credentials: the pull goes on with the others.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { loadCredentialProviderConfig, type CredentialProviderConfig } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import type { AuthConfig } from '../runtime/cri/index.js';
import { imageMatches, registryOf } from './match.js';
import { execPlugin, requestCredentials, type PluginExec, type PluginResponse, type PluginSpec } from './plugin.js';
import { quoteValue } from '../../api/quote.js';

type CredentialProvider = CredentialProviderConfig['providers'][number];

export const CREDENTIAL_PROVIDER_PLUGIN_MISSING = 'CREDENTIAL_PROVIDER_PLUGIN_MISSING';

/** The cache key of Global responses (upstream's). */
const GLOBAL_CACHE_KEY = 'global';

export interface PluginFailure {
  /** The provider's name (its plugin's file name). */
  readonly plugin: string;
  readonly image: string;
  readonly error: Error;
}

export interface CredentialProviders {
  /**
   * The credentials the matching providers give for pulling `repository` (`host[:port]/path`,
   * without tag), most specific registry first; a provider that fails is passed to `onFailure`
   * and skipped.
   */
  lookup(repository: string, onFailure: (failure: PluginFailure) => void): Promise<readonly AuthConfig[]>;
}

export interface CredentialProvidersOptions {
  readonly providers: readonly CredentialProvider[];
  /** --image-credential-provider-bin-dir. */
  readonly binDir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Runs the plugins (default: execFile). */
  readonly exec?: PluginExec;
  /** The environment the plugins inherit before their own env (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

interface Cached {
  readonly auth: PluginResponse['auth'];
  readonly expiresAt: number;
}

class Provider {
  private readonly cache = new Map<string, Cached>();
  private readonly running = new Map<string, Promise<PluginResponse['auth']>>();
  readonly spec: PluginSpec;

  constructor(private readonly config: CredentialProvider, binDir: string, private readonly options: CredentialProvidersOptions) {
    this.spec = { name: config.name, file: path.join(binDir, config.name), apiVersion: config.apiVersion, args: config.args, env: config.env };
  }

  matches(repository: string): boolean {
    return this.config.matchImages.some((pattern) => imageMatches(pattern, repository));
  }

  async provide(repository: string): Promise<PluginResponse['auth']> {
    const cached = this.cached(repository);
    if (cached !== undefined) return cached;
    const running = this.running.get(repository);
    if (running !== undefined) return running;
    const run = this.run(repository).finally(() => this.running.delete(repository));
    this.running.set(repository, run);
    return run;
  }

  private cached(repository: string): PluginResponse['auth'] | undefined {
    const now = this.options.clock.now();
    for (const [key, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(key);
    return (this.cache.get(repository) ?? this.cache.get(registryOf(repository)) ?? this.cache.get(GLOBAL_CACHE_KEY))?.auth;
  }

  private async run(repository: string): Promise<PluginResponse['auth']> {
    this.options.logger.v(5, 'Getting image credentials from a credential provider plugin', { plugin: this.spec.name, image: repository });
    const response = await requestCredentials(this.options.exec ?? execPlugin, this.spec, repository, this.options.env ?? process.env);
    const key = response.cacheKeyType === 'Image' ? repository : response.cacheKeyType === 'Registry' ? registryOf(repository) : GLOBAL_CACHE_KEY;
    const durationNs = response.cacheDuration ?? this.config.defaultCacheDuration;
    if (durationNs > 0) this.cache.set(key, { auth: response.auth, expiresAt: this.options.clock.now() + durationNs / 1e6 });
    return response.auth;
  }
}

/** The registry key of a response entry as the keyring indexes it: no scheme, no trailing slash. */
function registryKey(key: string): string {
  return key.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
}

export function createCredentialProviders(options: CredentialProvidersOptions): CredentialProviders {
  const providers = options.providers.map((p) => new Provider(p, options.binDir, options));
  return {
    async lookup(repository, onFailure) {
      const byRegistry = new Map<string, AuthConfig[]>();
      for (const provider of providers) {
        if (!provider.matches(repository)) continue;
        let auth: PluginResponse['auth'];
        try {
          auth = await provider.provide(repository);
        } catch (err) {
          onFailure({ plugin: provider.spec.name, image: repository, error: err instanceof Error ? err : new Error(String(err)) });
          continue;
        }
        for (const [key, entry] of auth) {
          const registry = registryKey(key);
          if (!imageMatches(registry, repository)) continue;
          const list = byRegistry.get(registry) ?? [];
          list.push({ username: entry.username, password: entry.password });
          byRegistry.set(registry, list);
        }
      }
      // As upstream's keyring: the registries in reverse lexical order, the more specific paths first.
      return [...byRegistry.keys()].sort().reverse().flatMap((k) => byRegistry.get(k) ?? []);
    },
  };
}

/**
 * Checks that the bin dir and each provider's plugin exist (upstream refuses to start
 * otherwise); throws CREDENTIAL_PROVIDER_PLUGIN_MISSING naming the first that does not.
 */
export async function checkPluginBinaries(providers: readonly CredentialProvider[], binDir: string): Promise<void> {
  const missing = async (file: string, what: string, subject: string): Promise<void> => {
    try {
      await stat(file);
    } catch (err) {
      throw new OrchError(CREDENTIAL_PROVIDER_PLUGIN_MISSING, 'invalid', `${what} ${file} cannot be found: ${err instanceof Error ? err.message : String(err)}`, { subject, cause: err });
    }
  };
  await missing(binDir, '--image-credential-provider-bin-dir', '--image-credential-provider-bin-dir');
  for (const p of providers) await missing(path.join(binDir, p.name), `the plugin of credential provider ${quoteValue(p.name)},`, p.name);
}

/** Reads --image-credential-provider-config, checks the plugins exist and returns the providers. */
export async function loadCredentialProviders(options: Omit<CredentialProvidersOptions, 'providers'> & { readonly configPath: string }): Promise<CredentialProviders> {
  const config = await loadCredentialProviderConfig(options.configPath);
  await checkPluginBinaries(config.providers, options.binDir);
  options.logger.info('Image credential provider plugins registered', { plugins: config.providers.map((p) => p.name), binDir: options.binDir });
  return createCredentialProviders({ ...options, providers: config.providers });
}

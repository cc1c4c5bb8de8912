/**
 * Running one credential provider plugin (upstream: execPlugin): the binary named after the
 * provider in --image-credential-provider-bin-dir, started directly (never through a shell)
 * with the provider's args, this process's environment plus the provider's env, a
 * CredentialProviderRequest on stdin, and a one-minute limit. Its stdout must be a
 * CredentialProviderResponse of the configured apiVersion; anything else is an error naming the
 * plugin.
 */
import { execFile } from 'node:child_process';
import { OrchError } from '../../api/errors.js';
import { parseDuration } from '../../api/duration.js';
import { quoteValue } from '../../api/quote.js';

export const CREDENTIAL_PROVIDER_PLUGIN_FAILED = 'CREDENTIAL_PROVIDER_PLUGIN_FAILED';
export const CREDENTIAL_PROVIDER_RESPONSE_INVALID = 'CREDENTIAL_PROVIDER_RESPONSE_INVALID';

/** Upstream's catch-all limit of a plugin run. */
export const PLUGIN_TIMEOUT_MS = 60_000;

export type CacheKeyType = 'Image' | 'Registry' | 'Global';

export interface PluginResponse {
  readonly cacheKeyType: CacheKeyType;
  /** Nanoseconds; undefined: the provider's defaultCacheDuration. */
  readonly cacheDuration?: number;
  /** Credentials by the registry (pattern) they are for. */
  readonly auth: ReadonlyMap<string, { readonly username: string; readonly password: string }>;
}

export interface PluginRun {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly stdin: string;
  readonly timeoutMs: number;
}

/** Starts a plugin and resolves to its stdout; rejects when it cannot start, exits non-zero or outlives the limit. */
export interface PluginExec {
  run(run: PluginRun): Promise<string>;
}

/** The real one: execFile, no shell; stderr goes into the error. */
export const execPlugin: PluginExec = {
  run: (r) => new Promise((resolve, reject) => {
    const child = execFile(r.file, [...r.args], { env: r.env, timeout: r.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err === null) {
        resolve(stdout);
        return;
      }
      const { killed, code, signal } = err as { killed?: boolean; code?: unknown; signal?: unknown };
      const why = killed === true ? `did not finish within ${r.timeoutMs / 1000}s`
        : typeof code === 'number' ? `exit status ${code}`
          : typeof signal === 'string' ? `killed by ${signal}`
            : err.message.split('\n')[0] ?? err.message;
      reject(new Error(`${why}${stderr.trim() === '' ? '' : `: ${stderr.trim().slice(0, 500)}`}`));
    });
    child.stdin?.on('error', () => {
      // A plugin that exits without reading its stdin closes the pipe; its exit status says what happened.
    });
    child.stdin?.end(r.stdin);
  }),
};

export interface PluginSpec {
  readonly name: string;
  readonly file: string;
  readonly apiVersion: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
}

/** Runs the plugin for `image`; throws CREDENTIAL_PROVIDER_PLUGIN_FAILED or CREDENTIAL_PROVIDER_RESPONSE_INVALID naming it. */
export async function requestCredentials(exec: PluginExec, plugin: PluginSpec, image: string, baseEnv: Readonly<Record<string, string | undefined>>): Promise<PluginResponse> {
  const request = JSON.stringify({ apiVersion: plugin.apiVersion, kind: 'CredentialProviderRequest', image });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
  for (const e of plugin.env) env[e.name] = e.value;
  let stdout: string;
  try {
    stdout = await exec.run({ file: plugin.file, args: plugin.args, env, stdin: request, timeoutMs: PLUGIN_TIMEOUT_MS });
  } catch (err) {
    throw new OrchError(CREDENTIAL_PROVIDER_PLUGIN_FAILED, 'unavailable',
      `credential provider plugin ${quoteValue(plugin.name)} failed for image ${quoteValue(image)}: ${err instanceof Error ? err.message : String(err)}`,
      { subject: plugin.file, cause: err });
  }
  return decodeResponse(plugin, stdout);
}

function invalid(plugin: PluginSpec, why: string): OrchError {
  return new OrchError(CREDENTIAL_PROVIDER_RESPONSE_INVALID, 'invalid', `credential provider plugin ${quoteValue(plugin.name)} answered with an invalid response: ${why}`, { subject: plugin.file });
}

/** Checks and decodes a response; its text is never put in an error (it holds credentials). */
export function decodeResponse(plugin: PluginSpec, stdout: string): PluginResponse {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw invalid(plugin, 'stdout is not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid(plugin, 'stdout is not a JSON object');
  const r = doc as Record<string, unknown>;
  if (r.apiVersion !== plugin.apiVersion) {
    throw invalid(plugin, `apiVersion ${quoteValue(r.apiVersion ?? '')} does not match the configured ${quoteValue(plugin.apiVersion)}`);
  }
  if (r.kind !== 'CredentialProviderResponse') throw invalid(plugin, `kind ${quoteValue(r.kind ?? '')} is not CredentialProviderResponse`);
  const keyType = r.cacheKeyType;
  if (keyType !== 'Image' && keyType !== 'Registry' && keyType !== 'Global') {
    throw invalid(plugin, `cacheKeyType ${quoteValue(keyType ?? '')} is not one of Image, Registry, Global`);
  }
  let cacheDuration: number | undefined;
  if (r.cacheDuration !== undefined && r.cacheDuration !== null) {
    if (typeof r.cacheDuration !== 'string') throw invalid(plugin, 'cacheDuration is not a duration string (e.g. "5m0s")');
    try {
      cacheDuration = parseDuration(r.cacheDuration);
    } catch {
      throw invalid(plugin, `cacheDuration ${quoteValue(r.cacheDuration)} is not a duration (e.g. "5m0s")`);
    }
  }
  const auth = new Map<string, { username: string; password: string }>();
  const authField = r.auth ?? {};
  if (typeof authField !== 'object' || Array.isArray(authField)) throw invalid(plugin, 'auth is not an object');
  for (const [registry, entry] of Object.entries(authField as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) throw invalid(plugin, `auth[${quoteValue(registry)}] is not an object`);
    const { username, password } = entry as { username?: unknown; password?: unknown };
    if ((username !== undefined && typeof username !== 'string') || (password !== undefined && typeof password !== 'string')) {
      throw invalid(plugin, `auth[${quoteValue(registry)}]: username and password must be strings`);
    }
    auth.set(registry, { username: username ?? '', password: password ?? '' });
  }
  return { cacheKeyType: keyType, ...(cacheDuration === undefined ? {} : { cacheDuration }), auth };
}

/**
 * CredentialProviderConfig (--image-credential-provider-config): read, decoded and validated
 * with the same care as the main file. Image pulls use it later; this module only loads it.
 */
import { AggregateInvalidError } from '../../api/errors.js';
import { loadDocument, resolveUserPath } from './file.js';
import { withDefaults } from './merge.js';
import {
  CREDENTIAL_PROVIDER_CONFIG_KIND, credentialProviderConfigSchema, type CredentialProviderConfig,
} from './types.js';
import { quoteValue } from '../../api/quote.js';

/** Request versions a plugin may speak (upstream's, renamed). */
export const CREDENTIAL_PROVIDER_API_VERSIONS = [
  'credentialprovider.nodeagent.orch.io/v1',
  'credentialprovider.nodeagent.orch.io/v1beta1',
  'credentialprovider.nodeagent.orch.io/v1alpha1',
] as const;

/**
 * A matchImages pattern: a registry host (globs `*` allowed in the host only, each matching one
 * dot-separated segment), an optional port and an optional path; no scheme.
 */
export function matchImageProblem(pattern: string): string | undefined {
  if (pattern === '') return 'must not be empty';
  if (pattern.includes('://')) return `${quoteValue(pattern)} must not contain a scheme`;
  const slash = pattern.indexOf('/');
  const hostPort = slash < 0 ? pattern : pattern.slice(0, slash);
  const path = slash < 0 ? '' : pattern.slice(slash + 1);
  const [host = '', port, extra] = hostPort.split(':');
  if (extra !== undefined || (port !== undefined && !/^\d{1,5}$/.test(port))) return `${quoteValue(pattern)} has an invalid port`;
  const segments = host.split('.');
  if (segments.some((s) => s === '' || !/^[a-z0-9*]([a-z0-9*-]*[a-z0-9*])?$/i.test(s))) {
    return `${quoteValue(pattern)} has an invalid registry host (globs * are allowed within host segments only)`;
  }
  if (path.includes('*')) return `${quoteValue(pattern)}: globs are allowed in the host only, not in the path`;
  return undefined;
}

export function validateCredentialProviderConfig(config: CredentialProviderConfig): string[] {
  const problems: string[] = [];
  const providers = config.providers;
  if (providers.length === 0) problems.push('providers: at least one provider is required');
  const names = new Set<string>();
  providers.forEach((p, i) => {
    const at = `providers[${i}]`;
    if (p.name === '') problems.push(`${at}.name: required`);
    else if (p.name.includes('/') || p.name === '.' || p.name === '..') {
      problems.push(`${at}.name: ${quoteValue(p.name)} must be a plugin file name in --image-credential-provider-bin-dir, without a path`);
    }
    if (names.has(p.name)) problems.push(`${at}.name: duplicate provider name ${quoteValue(p.name)}`);
    names.add(p.name);
    const images = p.matchImages;
    if (images.length === 0) problems.push(`${at}.matchImages: at least one pattern is required`);
    images.forEach((m, j) => {
      const problem = matchImageProblem(m);
      if (problem !== undefined) problems.push(`${at}.matchImages[${j}]: ${problem}`);
    });
    if (p.defaultCacheDuration < 0) problems.push(`${at}.defaultCacheDuration: must not be negative`);
    if (!(CREDENTIAL_PROVIDER_API_VERSIONS as readonly string[]).includes(p.apiVersion)) {
      problems.push(`${at}.apiVersion: ${quoteValue(p.apiVersion)} is not supported; use one of ${CREDENTIAL_PROVIDER_API_VERSIONS.join(', ')}`);
    }
    p.env.forEach((e, j) => {
      if (e.name === '') problems.push(`${at}.env[${j}].name: required`);
    });
  });
  return problems;
}

/** Reads and validates the file; throws AggregateInvalidError `CREDENTIAL_PROVIDER_CONFIG_INVALID` with every problem. */
export async function loadCredentialProviderConfig(path: string, cwd: string = process.cwd()): Promise<CredentialProviderConfig> {
  const abs = resolveUserPath(path, cwd);
  const doc = await loadDocument(abs, credentialProviderConfigSchema, CREDENTIAL_PROVIDER_CONFIG_KIND, 'credential provider config');
  const problems = [...doc.problems];
  const required = ['providers'];
  for (const r of required) if (!doc.present.includes(r)) problems.push(`${abs}: field ${r}: required field is missing`);
  const config = withDefaults(credentialProviderConfigSchema, doc.patch) as unknown as CredentialProviderConfig;
  if (problems.length === 0) problems.push(...validateCredentialProviderConfig(config).map((p) => `${abs}: ${p}`));
  if (problems.length > 0) {
    throw new AggregateInvalidError('CREDENTIAL_PROVIDER_CONFIG_INVALID', problems, `invalid credential provider config ${abs}`);
  }
  return config;
}

/**
 * Registry credentials from a pod's imagePullSecrets (upstream: credentialprovider's
 * DockerKeyring from secrets): secrets of type orch.io/dockerconfigjson (`.dockerconfigjson`:
 * {"auths": {...}}) or orch.io/dockercfg (`.dockercfg`: the map itself; the kubernetes.io
 * names are accepted too), each entry keyed by a registry host (optionally with a port, a
 * path and a scheme) holding username/password or `auth` (base64 "user:password"). The entry
 * matching the image's registry and the longest path prefix wins; secrets are tried in order.
 */
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import type { AuthConfig } from '../runtime/cri/index.js';

interface DockerEntry {
  readonly username?: string;
  readonly password?: string;
  readonly auth?: string;
  readonly identitytoken?: string;
}

/** The registry host (with port) and the repository path of an image reference. */
export function imageRegistry(image: string): { host: string; path: string } {
  const name = image.split('@')[0] ?? image;
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  const isHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = isHost ? first : 'docker.io';
  let path = isHost ? name.slice(slash + 1) : name;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) path = path.slice(0, colon);
  return { host, path };
}

function normalizeKey(key: string): { host: string; path: string } {
  let k = key.replace(/^[a-z]+:\/\//i, '');
  if (k === 'index.docker.io/v1/' || k.startsWith('index.docker.io')) k = 'docker.io';
  const slash = k.indexOf('/');
  return slash === -1 ? { host: k, path: '' } : { host: k.slice(0, slash), path: k.slice(slash + 1).replace(/\/$/, '') };
}

function entries(secret: Secret): Record<string, DockerEntry> {
  const data = secret.data ?? {};
  const decode = (v: string | undefined): unknown => (v === undefined ? undefined : JSON.parse(Buffer.from(v, 'base64').toString('utf8')));
  try {
    const json = decode(data['.dockerconfigjson']) as { auths?: Record<string, DockerEntry> } | undefined;
    if (json?.auths !== undefined) return json.auths;
    const cfg = decode(data['.dockercfg']) as Record<string, DockerEntry> | undefined;
    if (cfg !== undefined) return cfg;
  } catch {
    // A malformed secret gives no credentials (upstream skips it too); the pull then fails with the registry's answer.
    return {};
  }
  return {};
}

/**
 * The CRI AuthConfig of an entry. serverAddress stays empty: containerd parses it as a URL and
 * refuses a bare host:port, and the entry was already matched to the image's registry here.
 */
function toAuth(e: DockerEntry): AuthConfig {
  let { username, password } = e;
  if ((username === undefined || username === '') && e.auth !== undefined && e.auth !== '') {
    const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i !== -1) {
      username = decoded.slice(0, i);
      password = decoded.slice(i + 1);
    }
  }
  return {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(e.identitytoken === undefined ? {} : { identityToken: e.identitytoken }),
  };
}

/** The credentials for pulling `image` from the given secrets (in order), or undefined. */
export function credentialsFor(image: string, secrets: readonly Secret[]): AuthConfig | undefined {
  const want = imageRegistry(image);
  for (const secret of secrets) {
    let best: { length: number; auth: AuthConfig } | undefined;
    for (const [key, entry] of Object.entries(entries(secret))) {
      const k = normalizeKey(key);
      if (k.host !== want.host) continue;
      if (k.path !== '' && want.path !== k.path && !want.path.startsWith(`${k.path}/`)) continue;
      if (best === undefined || k.path.length > best.length) best = { length: k.path.length, auth: toAuth(entry) };
    }
    if (best !== undefined) return best.auth;
  }
  return undefined;
}

/**
 * The pull-credentials function of the runtime manager: reads the pod's imagePullSecrets
 * through `getSecret` (undefined: not found, skipped as upstream does with a log line).
 */
export function pullCredentials(getSecret: (namespace: string, name: string) => Promise<Secret | undefined>) {
  return async (pod: NodePod, image: string): Promise<AuthConfig | undefined> => {
    const refs = pod.spec?.imagePullSecrets ?? [];
    if (refs.length === 0) return undefined;
    const ns = pod.metadata.namespace;
    const secrets: Secret[] = [];
    for (const ref of refs) {
      if (ref.name === undefined || ref.name === '') continue;
      const s = await getSecret(ns, ref.name);
      if (s !== undefined) secrets.push(s);
    }
    return credentialsFor(image, secrets);
  };
}

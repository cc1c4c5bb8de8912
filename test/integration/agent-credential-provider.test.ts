/**
 * Image credential provider plugins end to end: the real nodeagent (API-server mode, a real
 * containerd and orch-apiserver) with --image-credential-provider-config naming two plugins
 * (shell scripts) for a registry that asks for basic authentication. A pull of an image the
 * working plugin matches uses its credentials (the request it read on stdin, its args and env
 * checked; a second pull is served from its Registry cache); the failing plugin is a
 * FailedCredentialProvider event and a log line naming it, and the pull goes on with the pod's
 * pull secret.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Event, Pod } from 'kubernetes-types/core/v1.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { startRegistry, type RegistryInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';

const API_VERSION = 'credentialprovider.nodeagent.orch.io/v1';
const USER = 'puller';
const PASSWORD = 'pull-pass';
let registry: RegistryInstance;
let cluster: Cluster;
let dir: string;

const b64 = (t: string): string => Buffer.from(t).toString('base64');

async function request(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  return cluster.server.client.request(method, path, body === undefined ? {} : { body });
}

async function podOf(name: string): Promise<Pod | undefined> {
  const res = await request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? res.body : undefined;
}

/** A pod of one container pulled with policy Always (busybox sleeps; the pause image runs its own entrypoint). */
async function createPod(name: string, image: string, extra: Record<string, unknown> = {}): Promise<void> {
  const command = image.includes('/busybox') ? { command: ['sleep', '3600'] } : {};
  const res = await request('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { nodeName: cluster.node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, imagePullPolicy: 'Always', ...command }], ...extra },
  });
  assert.equal(res.status, 201, res.text);
}

async function eventsOf(name: string): Promise<Event[]> {
  const res = await request('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`);
  return (res.body.items as Event[] | undefined) ?? [];
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'credential-provider-'));
  registry = await startRegistry({ auth: `${USER}:${PASSWORD}` });
  const bin = join(dir, 'plugins');
  await mkdir(bin);
  // The working plugin records what it was given (stdin, its first argument, an env variable
  // of the provider and one inherited), then answers for the registry, cached per registry.
  await writeFile(join(bin, 'good-plugin'), [
    '#!/bin/sh',
    'request=$(cat)',
    'printf \'%s|%s|%s|%s\\n\' "$request" "$1" "$PLUGIN_TOKEN" "$INHERITED" >> "$PLUGIN_LOG"',
    `printf '{"apiVersion":"${API_VERSION}","kind":"CredentialProviderResponse","cacheKeyType":"Registry","cacheDuration":"5m","auth":{"${registry.host}":{"username":"${USER}","password":"${PASSWORD}"}}}'`,
    '',
  ].join('\n'));
  await writeFile(join(bin, 'broken-plugin'), '#!/bin/sh\ncat >/dev/null\necho "no token today" >&2\nexit 3\n');
  await chmod(join(bin, 'good-plugin'), 0o755);
  await chmod(join(bin, 'broken-plugin'), 0o755);
  const config = join(dir, 'credential-providers.yaml');
  await writeFile(config, [
    'apiVersion: nodeagent.config.orch.io/v1beta1',
    'kind: CredentialProviderConfig',
    'providers:',
    '- name: good-plugin',
    `  matchImages: ["${registry.host}/library/busybox"]`,
    '  defaultCacheDuration: 1m',
    `  apiVersion: ${API_VERSION}`,
    '  args: [--from-config]',
    `  env: [{name: PLUGIN_TOKEN, value: from-env}, {name: PLUGIN_LOG, value: ${join(dir, 'good.log')}}]`,
    '- name: broken-plugin',
    `  matchImages: ["${registry.host}/library/pause"]`,
    '  defaultCacheDuration: 1m',
    `  apiVersion: ${API_VERSION}`,
    '',
  ].join('\n'));
  cluster = await startCluster({
    agentArgs: [`--image-credential-provider-config=${config}`, `--image-credential-provider-bin-dir=${bin}`],
    agentEnv: { INHERITED: 'inherited' },
  });
  // containerd reaches the registry over plain HTTP.
  await mkdir(join(cluster.containerd.dir, 'certs.d', registry.host), { recursive: true });
  await writeFile(join(cluster.containerd.dir, 'certs.d', registry.host, 'hosts.toml'),
    `server = "http://${registry.host}"\n[host."http://${registry.host}"]\n  capabilities = ["pull", "resolve"]\n`);
});

after(async () => {
  await cluster.stop();
  await registry.stop();
  await rm(dir, { recursive: true, force: true });
});

void describe('image credential provider plugins', () => {
  void it('pulls with the credentials of the matching plugin, and serves the next pull from its Registry cache', async () => {
    await createPod('plugin-pull', registry.images.busybox);
    await waitFor('plugin-pull Running', async () => (await podOf('plugin-pull'))?.status?.phase === 'Running', { timeoutMs: 90_000 });
    const lines = (await readFile(join(dir, 'good.log'), 'utf8')).trim().split('\n');
    assert.equal(lines.length, 1);
    const [requestText, arg, token, inherited] = (lines[0] ?? '').split('|');
    assert.deepEqual(JSON.parse(requestText ?? ''), { apiVersion: API_VERSION, kind: 'CredentialProviderRequest', image: `${registry.host}/library/busybox` });
    assert.deepEqual([arg, token, inherited], ['--from-config', 'from-env', 'inherited']);

    await createPod('plugin-cached', registry.images.busybox);
    await waitFor('plugin-cached Running', async () => (await podOf('plugin-cached'))?.status?.phase === 'Running', { timeoutMs: 90_000 });
    assert.ok((await eventsOf('plugin-cached')).some((e) => e.reason === 'Pulled' && (e.message ?? '').startsWith('Successfully pulled')), 'the image was pulled again');
    assert.equal((await readFile(join(dir, 'good.log'), 'utf8')).trim().split('\n').length, 1, 'no second plugin run within the cache duration');
  });

  void it('a failing plugin is an event and a log line naming it; the pull falls back to the pull secret', async () => {
    const secret = await request('POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'regcred' }, type: 'orch.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { [registry.host]: { auth: b64(`${USER}:${PASSWORD}`) } } })) },
    });
    assert.equal(secret.status, 201, secret.text);
    await createPod('fallback', registry.images.pause, { imagePullSecrets: [{ name: 'regcred' }] });
    const event = await waitFor('the FailedCredentialProvider event', async () =>
      (await eventsOf('fallback')).find((e) => e.reason === 'FailedCredentialProvider'), { timeoutMs: 90_000 });
    assert.equal(event.type, 'Warning');
    assert.match(event.message ?? '', /^credential provider plugin "broken-plugin" failed for image "127\.0\.0\.1:\d+\/library\/pause": exit status 3: no token today; pulling with the other credentials$/);
    await waitFor('fallback Running, pulled with the pull secret', async () => (await podOf('fallback'))?.status?.phase === 'Running', { timeoutMs: 90_000 });
    assert.match(cluster.agent.logs(), /Image credential provider plugin failed.*broken-plugin/);

    await createPod('no-fallback', registry.images.pause);
    await waitFor('the pull without a pull secret refused', async () => {
      const reason = (await podOf('no-fallback'))?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff';
    }, { timeoutMs: 90_000 });
  });
});

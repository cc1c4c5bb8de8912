/**
 * Service account tokens end to end: `kubectl create token` with every kubectl from 1.27 to
 * 1.33 (1.32+ send the TokenRequest in protobuf), the token accepted by the API server's
 * TokenReview and as a bearer token; a pod on a real node agent reading its automounted token,
 * CA and namespace (the ServiceAccount admission's kube-api-access volume) and a projected token
 * of its own audience, both accepted by TokenReview as the pod's service account; refused once
 * the pod is gone.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { kubectl, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];
const MOUNT = '/var/run/secrets/orch.io/serviceaccount';
let cluster: Cluster;
let binaries: Map<string, string>;
let dir: string;

const envFor = (version: string): KubectlEnv => ({ binary: binaries.get(version) ?? '', kubeconfig: cluster.server.adminKubeconfig, home: join(dir, `home-${version}`) });

interface Review {
  readonly authenticated?: boolean;
  readonly user?: { readonly username?: string; readonly groups?: string[]; readonly extra?: Record<string, string[]> };
  readonly audiences?: string[];
  readonly error?: string;
}

async function review(token: string, audiences?: string[]): Promise<Review> {
  const res = await cluster.server.client.request('POST', '/apis/authentication.orch.io/v1/tokenreviews', {
    body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token, ...(audiences === undefined ? {} : { audiences }) } },
  });
  assert.equal(res.status, 201, res.text);
  return (res.body.status ?? {});
}

async function podOf(name: string): Promise<Pod | undefined> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? (res.body) : undefined;
}

before(async () => {
  binaries = kubectlBinaries(27, 33);
  dir = await mkdtemp(join(tmpdir(), 'workloads-tokens-'));
  for (const v of VERSIONS) await mkdir(join(dir, `home-${v}`), { recursive: true });
  cluster = await startCluster();
});

after(async () => {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
});

void describe('kubectl create token', () => {
  for (const version of VERSIONS) {
    void it(`kubectl ${version}: a token of the service account, accepted as it`, { timeout: 60_000 }, async () => {
      const env = envFor(version);
      const sa = `robot-${version.replace('.', '')}`;
      await kubectl(env, ['create', 'serviceaccount', sa]);
      const token = (await kubectl(env, ['create', 'token', sa, '--duration=20m'])).stdout.trim();
      const status = await review(token);
      assert.equal(status.authenticated, true, status.error);
      assert.equal(status.user?.username, `system:serviceaccount:default:${sa}`);
      assert.deepEqual(status.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number; iat: number };
      assert.equal(claims.exp - claims.iat, 1200);
      const asRobot = await cluster.server.client.request('GET', '/api/v1/namespaces/default/configmaps', { token });
      assert.equal(asRobot.status, 200, asRobot.text);
      const audience = (await kubectl(env, ['create', 'token', sa, '--audience=vault'])).stdout.trim();
      assert.equal((await review(audience)).authenticated, false, 'not meant for the API server');
      assert.deepEqual((await review(audience, ['vault'])).audiences, ['vault']);
      await assert.rejects(kubectl(env, ['create', 'token', 'nobody']), /serviceaccounts "nobody" not found/);
    });
  }
});

void describe('projected service account tokens', () => {
  void it('a pod reads its automounted token, CA and namespace, and a token of its own audience; both are its account\'s until it goes', { timeout: 120_000 }, async () => {
    const env = envFor('1.33');
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'reader' },
      spec: {
        nodeName: cluster.node, terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'],
          volumeMounts: [{ name: 'vault-token', mountPath: '/vault', readOnly: true }] }],
        volumes: [{ name: 'vault-token', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault', expirationSeconds: 600 } }] } }],
      },
    };
    const file = join(dir, 'reader.json');
    await writeFile(file, JSON.stringify(pod));
    await kubectl(env, ['create', '-f', file]);
    await waitFor('reader Running', async () => (await podOf('reader'))?.status?.phase === 'Running', { timeoutMs: 60_000 });
    const created = await podOf('reader');
    assert.equal(created?.spec?.serviceAccountName, 'default');
    assert.ok(created.spec.volumes?.some((v) => v.name.startsWith('kube-api-access-')), 'the ServiceAccount admission added the API access volume');
    const cat = async (path: string): Promise<string> => (await kubectl(env, ['exec', 'reader', '--', 'cat', path])).stdout;
    const token = await cat(`${MOUNT}/token`);
    assert.equal(await cat(`${MOUNT}/namespace`), 'default');
    assert.equal(await cat(`${MOUNT}/ca.crt`), await readFile(join(cluster.server.dir, 'pki', 'ca.crt'), 'utf8'));
    const status = await review(token);
    assert.equal(status.authenticated, true, status.error);
    assert.equal(status.user?.username, 'system:serviceaccount:default:default');
    assert.deepEqual(status.user.extra?.['authentication.orch.io/pod-name'], ['reader']);
    const vault = await cat('/vault/token');
    assert.deepEqual((await review(vault, ['vault'])).user?.username, 'system:serviceaccount:default:default');
    const claims = JSON.parse(Buffer.from(vault.split('.')[1] ?? '', 'base64url').toString()) as { exp: number; iat: number; aud: string[] };
    assert.deepEqual([claims.exp - claims.iat, claims.aud], [600, ['vault']]);
    await kubectl(env, ['delete', 'pod', 'reader', '--wait=true']);
    await waitFor('reader gone', async () => (await podOf('reader')) === undefined, { timeoutMs: 60_000 });
    const gone = await review(token);
    assert.equal(gone.authenticated, false);
    assert.equal(gone.error, 'service account token: pod default/reader has been deleted');
  });
});

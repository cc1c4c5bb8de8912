/**
 * Environment from ConfigMaps and Secrets end to end: the ConfigMap and Secret made with the
 * stock kubectl (1.27 sends JSON, 1.33 protobuf), a pod on a real node agent whose containers
 * read them through env (configMapKeyRef, secretKeyRef, a missing optional key) and envFrom
 * (with a prefix, an invalid key skipped and reported by an InvalidEnvironmentVariableNames
 * event); a missing key that is not optional leaves the container in CreateContainerConfigError
 * saying what is missing. A standalone agent refuses such a pod naming the pod and the reference.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startAgentProcess } from '../helpers/agent.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { startContainerd } from '../helpers/containerd.js';
import { kubectl, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const VERSIONS = ['1.27', '1.33'];
let cluster: Cluster;
let binaries: Map<string, string>;
let dir: string;

const envFor = (version: string): KubectlEnv => ({ binary: binaries.get(version) ?? '', kubeconfig: cluster.server.adminKubeconfig, home: join(dir, `home-${version}`) });

async function podOf(name: string): Promise<Pod> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

before(async () => {
  binaries = kubectlBinaries(27, 33);
  dir = await mkdtemp(join(tmpdir(), 'workloads-env-'));
  for (const v of VERSIONS) await mkdir(join(dir, `home-${v}`), { recursive: true });
  cluster = await startCluster();
});

after(async () => {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
});

void describe('environment from ConfigMaps and Secrets', () => {
  for (const version of VERSIONS) {
    const tag = version.replace('.', '');
    void it(`kubectl ${version}: a pod reads keys, optional keys and envFrom sources`, { timeout: 120_000 }, async () => {
      const env = envFor(version);
      await kubectl(env, ['create', 'configmap', `settings-${tag}`, '--from-literal=mode=fast', '--from-literal=level=3']);
      await kubectl(env, ['create', 'secret', 'generic', `creds-${tag}`, '--from-literal=password=s3cret', '--from-literal=user=bob', '--from-literal=9lives=cat']);
      const name = `env-${tag}`;
      const pod = {
        apiVersion: 'v1', kind: 'Pod', metadata: { name },
        spec: {
          nodeName: cluster.node, terminationGracePeriodSeconds: 1, restartPolicy: 'Never',
          containers: [{
            name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'echo "MODE=$MODE PASS=$PASS URL=$URL OPT=${OPT-unset} CFG_level=$CFG_level user=$user"; env | grep -c "9lives" || true'],
            env: [
              { name: 'MODE', valueFrom: { configMapKeyRef: { name: `settings-${tag}`, key: 'mode' } } },
              { name: 'PASS', valueFrom: { secretKeyRef: { name: `creds-${tag}`, key: 'password' } } },
              { name: 'URL', value: 'db://$(user):$(PASS)@$(MODE)' },
              { name: 'OPT', valueFrom: { configMapKeyRef: { name: `settings-${tag}`, key: 'missing', optional: true } } },
            ],
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: `settings-${tag}` } }, { secretRef: { name: `creds-${tag}` } }],
          }],
        },
      };
      const file = join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify(pod));
      await kubectl(env, ['create', '-f', file]);
      await waitFor(`${name} Succeeded`, async () => (await podOf(name)).status?.phase === 'Succeeded', { timeoutMs: 60_000 });
      const logs = (await kubectl(env, ['logs', name])).stdout;
      assert.equal(logs, 'MODE=fast PASS=s3cret URL=db://bob:s3cret@fast OPT=unset CFG_level=3 user=bob\n0\n');
      const events = (await kubectl(env, ['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'])).stdout;
      assert.match(events, new RegExp(`InvalidEnvironmentVariableNames: Keys \\[9lives\\] from the EnvFrom secret default/creds-${tag} were skipped`));
    });
  }

  void it('a missing key that is not optional keeps the container in CreateContainerConfigError, saying which', { timeout: 60_000 }, async () => {
    const env = envFor('1.33');
    await kubectl(env, ['create', 'configmap', 'partial', '--from-literal=present=1']);
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'missing-key' },
      spec: {
        nodeName: cluster.node, terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'],
          env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'partial', key: 'absent' } } }] }],
      },
    };
    const file = join(dir, 'missing-key.json');
    await writeFile(file, JSON.stringify(pod));
    await kubectl(env, ['create', '-f', file]);
    const waiting = await waitFor('CreateContainerConfigError', async () => {
      const w = (await podOf('missing-key')).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' ? w : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(waiting.message, "env X: couldn't find key absent in ConfigMap default/partial");
    // The key appears: the container starts on a later sync.
    await kubectl(env, ['patch', 'configmap', 'partial', '--type=merge', '-p', '{"data":{"absent":"now"}}']);
    await waitFor('missing-key Running', async () => (await podOf('missing-key')).status?.phase === 'Running', { timeoutMs: 90_000 });
  });
});

void describe('a standalone agent', () => {
  void it('refuses env from a ConfigMap, naming the pod and the reference', { timeout: 120_000 }, async () => {
    const containerd = await startContainerd();
    const manifests = await mkdtemp(join(tmpdir(), 'workloads-env-static-'));
    try {
      await writeFile(join(manifests, 'web.yaml'), [
        'apiVersion: v1', 'kind: Pod', 'metadata: {name: web, namespace: default}',
        `spec: {containers: [{name: main, image: ${containerd.images.busybox}, imagePullPolicy: IfNotPresent, command: [sleep, "3600"], env: [{name: X, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}]}]}`,
        '',
      ].join('\n'));
      const agent = await startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests });
      try {
        await agent.waitForLog(/container \\"main\\" of pod default\/web-[^:]+: env X: configMapKeyRef \\"settings\\" \(key \\"mode\\"\) names a ConfigMap of the API server, and this agent runs without one/, 60_000);
        assert.doesNotMatch(agent.logs(), /does not read yet/);
      } finally {
        await agent.stop();
      }
    } finally {
      await containerd.stop();
      await rm(manifests, { recursive: true, force: true });
    }
  });
});

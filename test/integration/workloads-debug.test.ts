/**
 * `kubectl debug` end to end, with every kubectl from 1.27 to 1.33: an ephemeral container
 * added to a running pod through pods/ephemeralcontainers, started by the real node agent in the
 * pod's namespaces with the target container's process namespace (`--target`), attached to with
 * stdin (SPDY before 1.30, WebSocket after), and its status in ephemeralContainerStatuses; with a
 * terminal (`-it`) for the oldest and the newest. The pod's own container keeps running.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { converse, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];
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
  dir = await mkdtemp(join(tmpdir(), 'workloads-debug-'));
  for (const v of VERSIONS) await mkdir(join(dir, `home-${v}`), { recursive: true });
  cluster = await startCluster();
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' },
    spec: {
      nodeName: cluster.node, terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exec sleep 3601'] }],
    },
  };
  const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
  assert.equal(res.status, 201, res.text);
  await waitFor('web Running', async () => (await podOf('web')).status?.phase === 'Running', { timeoutMs: 60_000 });
});

after(async () => {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
});

void describe('kubectl debug', () => {
  for (const version of VERSIONS) {
    void it(`kubectl ${version}: runs commands in an ephemeral container next to the running one`, { timeout: 120_000 }, async () => {
      const env = envFor(version);
      const name = `dbg-${version.replace('.', '')}`;
      const run = await converse(env, [
        'debug', 'web', '-i', `--image=${cluster.containerd.images.busybox}`, '--image-pull-policy=IfNotPresent', '--target=main', `--container=${name}`, '--', 'sh',
      ], [{ send: 'echo "in $(hostname)"; ps -o args; echo debug-done\n', awaitOutput: /debug-done/ }, { send: 'exit\n' }], 90_000);
      assert.match(run.stdout, /in web\n/);
      assert.match(run.stdout, /sleep 3601/, 'the target container\'s processes are visible');
      assert.match(run.stdout, /debug-done/);
      const status = await waitFor(`${name} terminated`, async () => {
        const s = (await podOf('web')).status?.ephemeralContainerStatuses?.find((c) => c.name === name);
        return s?.state?.terminated === undefined ? undefined : s;
      }, { timeoutMs: 30_000 });
      assert.equal(status.state?.terminated?.exitCode, 0);
      assert.equal(status.ready, false);
      const pod = await podOf('web');
      assert.equal(pod.status?.phase, 'Running');
      assert.equal(pod.status.containerStatuses?.[0]?.restartCount, 0, 'the pod\'s own container was left alone');
      assert.equal(pod.spec?.ephemeralContainers?.find((c) => c.name === name)?.targetContainerName, 'main');
    });
  }

  for (const version of ['1.27', '1.33']) {
    void it(`kubectl ${version}: -it attaches a terminal to a shell in the pod`, { timeout: 120_000 }, async () => {
      const env = envFor(version);
      const name = `tty-${version.replace('.', '')}`;
      const script = join(dir, `${name}.sh`);
      const command = `stty cols 91 rows 37; ${env.binary} debug web -it --image=${cluster.containerd.images.busybox} --image-pull-policy=IfNotPresent --container=${name} -- sh -c 'sleep 2; stty size; echo tty-done'`;
      await writeFile(script, command);
      const out = await new Promise<string>((resolve, reject) => {
        execFile('script', ['-qec', `bash ${script}`, '/dev/null'], { env: { ...process.env, HOME: env.home, KUBECONFIG: env.kubeconfig }, timeout: 90_000 }, (err, stdout) => {
          if (err !== null) reject(new Error(`script: ${err.message}\n${stdout}`));
          else resolve(stdout);
        });
      });
      assert.match(out, /37 91/);
      assert.match(out, /tty-done/);
    });
  }
});

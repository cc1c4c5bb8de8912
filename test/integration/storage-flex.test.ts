/**
 * FlexVolume on the node: orch-apiserver and the real nodeagent binary on a real containerd,
 * with the sample driver (examples/flexvolume/hostdir) installed in the agent's volumePluginDir:
 *
 * - a pod with a flexVolume of the sample driver writes a file that lands in the host directory
 *   named by the volume's options; deleting the pod unmounts the volume and removes its
 *   directory, and the host directory keeps the file;
 * - a driver that prints garbage (after mounting!) gives a FailedMount event naming the volume,
 *   the driver, the call and the output; the pod stays Pending, retried, with nothing mounted
 *   below its directory; a pod of another driver runs meanwhile;
 * - drivers installed after the agent started are found, and mount gets upstream's options
 *   renamed (orch.io/pod.*, orch.io/serviceAccount.name, orch.io/readwrite, orch.io/secret/<key>
 *   from a secret of the driver's type, base64) with the volume's own options;
 * - a driver whose init says fsGroup: the pod's fsGroup on the mounted directory (group, setgid,
 *   g+rwx); its unmount "Not supported": the agent unmounts the directory itself;
 * - a PersistentVolume with a flexVolume source, bound to a claim by the PV controller, is
 *   mounted for the claim's pod in `<pod>/volumes/<vendor>~<driver>/<pv name>`.
 */
import assert from 'node:assert/strict';
import { chmod, copyFile, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { getObject, kubectlCreate, runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { podQueries } from '../helpers/storage.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const SAMPLE_DRIVER = resolve('examples/flexvolume/hostdir');
let dir: string;
let rootDir: string;
let pluginDir: string;
let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess;

const getJson = <T>(path: string): Promise<T | undefined> => getObject<T>(server, path);
const flexPod = (name: string, driver: string, options: Record<string, string>, script: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: {
    nodeName: NODE, restartPolicy: 'Never', terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', flexVolume: { driver, options, ...extra } }],
  },
});
const { pod: podOf, waitForPhase, events: podEvents } = podQueries(getJson);
/** The mount points at or below `path` (from this process's mount table, which the agent shares). */
async function mountsBelow(path: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text.split('\n').map((l) => l.split(' ')[4] ?? '').filter((p) => p === path || p.startsWith(`${path}/`));
}
const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false);

/** Installs an executable as `<pluginDir>/<vendor>~<driver>/<driver>`, written to a temporary name and renamed into place. */
async function installDriver(dirName: string, content: string | { copyOf: string }): Promise<void> {
  const driverDir = join(pluginDir, dirName);
  await mkdir(driverDir, { recursive: true });
  const exe = dirName.split('~').at(-1) ?? dirName;
  const target = join(driverDir, exe);
  if (typeof content === 'string') await writeFile(target, content);
  else await copyFile(content.copyOf, target);
  await chmod(target, 0o755);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storage-flex-'));
  rootDir = join(dir, 'root');
  pluginDir = join(dir, 'volume-plugins');
  await stat(SAMPLE_DRIVER).catch(() => { throw new Error(`the sample driver ${SAMPLE_DRIVER} is missing (run the test from the repository root)`); });
  await installDriver('example.com~hostdir', { copyOf: SAMPLE_DRIVER });
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite', controllers: true });
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`, `--volume-plugin-dir=${pluginDir}`],
  });
  await waitFor('the node registered', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`)) !== undefined, { timeoutMs: 60_000 });
});

after(async () => {
  await agent.stop();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('FlexVolume drivers on the node', () => {
  void it('mounts the sample driver\'s volume: the pod\'s file lands in the host directory; deleting the pod unmounts and removes the volume directory', async () => {
    const host = join(dir, 'host-a');
    await kubectlCreate(server, [flexPod('flex-writer', 'example.com/hostdir', { hostDir: host }, 'grep -q " /data " /proc/mounts && echo flex > /data/file')]);
    const pod = await waitForPhase('flex-writer', 'Succeeded');
    assert.equal(await readFile(join(host, 'file'), 'utf8'), 'flex\n');
    const uid = pod.metadata?.uid ?? '';
    const volumeDir = join(rootDir, 'pods', uid, 'volumes', 'example.com~hostdir', 'data');
    await runKubectl(server, ['delete', 'pod', 'flex-writer', '--wait=true']);
    await waitFor('the volume unmounted and its directory removed', async () => (await mountsBelow(join(rootDir, 'pods', uid))).length === 0 && !(await exists(volumeDir)), { timeoutMs: 60_000 });
    // Teardown unmounts; it never deletes the data of the host directory.
    assert.equal(await readFile(join(host, 'file'), 'utf8'), 'flex\n');
  });

  void it('holds a pod whose driver prints garbage with a FailedMount event naming the volume and the cause, nothing mounted; other pods run', async () => {
    // Installed after the agent started; its mount really mounts, then answers garbage: the agent must undo the mount.
    const junk = join(dir, 'junk');
    await mkdir(junk);
    await installDriver('example.com~garbage', [
      '#!/bin/sh',
      'case "$1" in',
      '  init) echo \'{"status":"Success","capabilities":{"attach":false}}\' ;;',
      `  mount) mkdir -p "$2" && mount --bind ${junk} "$2" && echo 'mounted! (not json)' ;;`,
      '  unmount) umount "$2" 2>/dev/null; echo \'{"status":"Success"}\' ;;',
      '  *) echo \'{"status":"Not supported"}\' ;;',
      'esac',
      '',
    ].join('\n'));
    await kubectlCreate(server, [flexPod('flex-garbage', 'example.com/garbage', {}, 'echo never > /data/file')]);
    const event = await waitFor('a FailedMount event', async () => (await podEvents('flex-garbage')).find((e) => e.reason === 'FailedMount'), { timeoutMs: 60_000 });
    assert.match(event.message ?? '', /volume "data": FlexVolume driver example\.com\/garbage: mount failed: the output is not JSON: "mounted! \(not json\)"/);
    const uid = (await podOf('flex-garbage'))?.metadata?.uid ?? '';
    // Retried with back-off: the event repeats (as a series or a second event).
    await waitFor('the mount retried', async () => {
      const failed = (await podEvents('flex-garbage')).filter((e) => e.reason === 'FailedMount');
      return failed.length > 1 || (failed[0]?.count ?? 1) > 1 || (failed[0]?.series?.count ?? 1) > 1;
    }, { timeoutMs: 90_000 });
    await waitFor('nothing mounted below the pod', async () => (await mountsBelow(join(rootDir, 'pods', uid))).length === 0);
    assert.equal(await exists(join(rootDir, 'pods', uid, 'volumes', 'example.com~garbage', 'data')), false);
    const held = await podOf('flex-garbage');
    assert.equal(held?.status?.phase, 'Pending');
    assert.equal(await exists(join(junk, 'file')), false);

    // Another pod, of a driver installed now, runs while the bad one keeps failing.
    const host = join(dir, 'host-b');
    const log = join(dir, 'recorder.log');
    await installDriver('example.com~recorder', `#!/bin/sh\nprintf '%s\\n' "$*" >> ${log}\nexec ${SAMPLE_DRIVER} "$@"\n`);
    await kubectlCreate(server, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'flex-cred' }, type: 'example.com/recorder', data: { password: Buffer.from('s3cret').toString('base64') } },
      flexPod('flex-recorded', 'example.com/recorder', { hostDir: host }, 'echo recorded > /data/file', { secretRef: { name: 'flex-cred' }, readOnly: false }),
    ]);
    const recorded = await waitForPhase('flex-recorded', 'Succeeded');
    assert.equal(await readFile(join(host, 'file'), 'utf8'), 'recorded\n');
    const mountLine = (await readFile(log, 'utf8')).split('\n').find((l) => l.startsWith('mount '));
    assert.ok(mountLine !== undefined, 'the recorder driver saw a mount call');
    const [, mountDir, json] = /^mount (\S+) (.*)$/.exec(mountLine) ?? [];
    assert.equal(mountDir, join(rootDir, 'pods', recorded.metadata?.uid ?? '', 'volumes', 'example.com~recorder', 'data'));
    assert.deepEqual(JSON.parse(json ?? '{}'), {
      'orch.io/fsType': '',
      'orch.io/readwrite': 'rw',
      'orch.io/pvOrVolumeName': 'data',
      'orch.io/pod.name': 'flex-recorded',
      'orch.io/pod.namespace': 'default',
      'orch.io/pod.uid': recorded.metadata?.uid,
      'orch.io/serviceAccount.name': recorded.spec?.serviceAccountName ?? '',
      'orch.io/secret/password': Buffer.from('s3cret').toString('base64'),
      hostDir: host,
    });
    assert.equal((await podOf('flex-garbage'))?.status?.phase, 'Pending');
    await runKubectl(server, ['delete', 'pod', 'flex-garbage', 'flex-recorded', '--wait=true']);
  });

  void it('applies the pod\'s fsGroup for a driver whose init says fsGroup, and unmounts itself when the driver does not support unmount', async () => {
    const host = join(dir, 'host-g');
    await installDriver('example.com~grouped', [
      '#!/bin/sh',
      'case "$1" in',
      '  init) echo \'{"status":"Success","capabilities":{"attach":false,"fsGroup":true}}\' ;;',
      '  unmount) echo \'{"status":"Not supported"}\' ;;',
      `  *) exec ${SAMPLE_DRIVER} "$@" ;;`,
      'esac',
      '',
    ].join('\n'));
    const grouped = flexPod('flex-grouped', 'example.com/grouped', { hostDir: host }, 'stat -c "%g %a" /data > /data/perm') as { spec: Obj };
    await kubectlCreate(server, [{ ...grouped, spec: { ...grouped.spec, securityContext: { fsGroup: 2345 } } }]);
    const pod = await waitForPhase('flex-grouped', 'Succeeded');
    const [group, mode] = (await readFile(join(host, 'perm'), 'utf8')).trim().split(' ');
    assert.equal(group, '2345');
    assert.equal(parseInt(mode ?? '0', 8) & 0o2070, 0o2070, `mode ${mode ?? ''}: setgid and the group's rwx`);
    const uid = pod.metadata?.uid ?? '';
    await runKubectl(server, ['delete', 'pod', 'flex-grouped', '--wait=true']);
    // "Not supported": the agent unmounts the directory itself (umount, retried while busy) and removes it.
    await waitFor('the volume unmounted and its directory removed', async () => (await mountsBelow(join(rootDir, 'pods', uid))).length === 0
      && !(await exists(join(rootDir, 'pods', uid, 'volumes', 'example.com~grouped', 'data'))), { timeoutMs: 60_000 });
  });

  void it('mounts a claim bound to a PersistentVolume with a flexVolume source, with the PV\'s secret (named by no pod)', async () => {
    const host = join(dir, 'host-pv');
    await kubectlCreate(server, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'flex-pv-cred' }, type: 'example.com/hostdir', data: { key: Buffer.from('v').toString('base64') } },
      {
        apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'flex-pv' },
        spec: {
          capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '',
          flexVolume: { driver: 'example.com/hostdir', options: { hostDir: host }, secretRef: { namespace: 'default', name: 'flex-pv-cred' } },
        },
      },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'flex-claim' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } },
    ]);
    await waitFor('claim flex-claim Bound', async () => (await getJson<Obj>('/api/v1/namespaces/default/persistentvolumeclaims/flex-claim') as { status?: { phase?: string } } | undefined)?.status?.phase === 'Bound');
    await kubectlCreate(server, [{
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'flex-pv-writer' },
      spec: {
        nodeName: NODE, restartPolicy: 'Never', terminationGracePeriodSeconds: 0,
        containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo pv > /data/file'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'flex-claim' } }],
      },
    }]);
    const pod = await waitForPhase('flex-pv-writer', 'Succeeded');
    assert.equal(await readFile(join(host, 'file'), 'utf8'), 'pv\n');
    assert.ok(await exists(join(rootDir, 'pods', pod.metadata?.uid ?? '', 'volumes', 'example.com~hostdir', 'flex-pv')), 'the volume directory is named after the PV');
    await runKubectl(server, ['delete', 'pod', 'flex-pv-writer', '--wait=true']);
  });
});

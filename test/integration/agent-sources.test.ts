/**
 * The node agent end to end, second part: bad manifests, the URL source with headers, max
 * pods at admission, volumes (hostPath with its type checks, emptyDir in memory), --runonce,
 * and a runtime that is down when the agent starts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, containersOf, podManifest, runningContainer, sandboxesOf, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

let containerd: ContainerdInstance;
let cri: CriClient;
const cleanups: (() => Promise<unknown>)[] = [];

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function agentOn(manifestDir: string | undefined, args: readonly string[] = [], noWait = false): Promise<AgentProcess> {
  const a = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot,
    ...(manifestDir === undefined ? {} : { manifestDir }),
    args: [`--hostname-override=${NODE}`, ...args], noWait,
  });
  cleanups.push(() => a.stop());
  return a;
}

/** Stops an agent and removes every pod it left, so the next test starts from nothing. */
async function stopAndClean(a: AgentProcess): Promise<void> {
  await a.stop();
  for (const s of await cri.listPodSandbox()) {
    await cri.stopPodSandbox(s.id);
    await cri.removePodSandbox(s.id);
  }
}

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
});

after(async () => {
  for (const c of cleanups.reverse()) await c();
  cri.close();
  await containerd.stop();
});

void describe('pod sources and admission', () => {
  void it('rejects bad manifests with the file and the problem, and runs the others', async () => {
    const dir = await tempDir('nodeagent-bad-');
    const image = containerd.images.busybox;
    await writeFile(join(dir, 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: [oops\n');
    await writeFile(join(dir, 'badname.yaml'), podManifest({ name: 'Bad_Name', image, hostNetwork: true, command: 'sleep 3600' }));
    await writeFile(join(dir, 'noimage.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: noimage}\nspec: {containers: [{name: main}]}\n');
    await writeFile(join(dir, 'good.yaml'), podManifest({ name: 'good', image, hostNetwork: true, command: 'exec sleep 3600' }));
    await writeFile(join(dir, 'dup.yaml'), podManifest({ name: 'good', image, hostNetwork: true, command: 'exec sleep 3600' }));
    await writeFile(join(dir, '.hidden.yaml'), podManifest({ name: 'hidden', image, hostNetwork: true, command: 'exec sleep 3600' }));
    const a = await agentOn(dir);
    await waitFor('the good pod', () => runningContainer(cri, 'good'), { timeoutMs: 30_000 });
    await a.waitForLog(join(dir, 'broken.yaml'));
    await a.waitForLog(join(dir, 'badname.yaml'));
    await a.waitForLog(join(dir, 'noimage.yaml'));
    assert.match(a.logs(), /noimage\.yaml.*spec\.containers\[0\]\.image/s);
    assert.match(a.logs(), /dup\.yaml/);
    assert.equal((await sandboxesOf(cri, 'hidden')).length, 0, 'files starting with a dot are ignored');
    assert.equal((await sandboxesOf(cri, 'good')).length, 1, 'a duplicate name is not run twice');
    await stopAndClean(a);
  });

  void it('admits at most --max-pods pods', async () => {
    const dir = await tempDir('nodeagent-max-');
    const image = containerd.images.busybox;
    await writeFile(join(dir, 'a.yaml'), podManifest({ name: 'a', image, hostNetwork: true, command: 'exec sleep 3600' }));
    await writeFile(join(dir, 'b.yaml'), podManifest({ name: 'b', image, hostNetwork: true, command: 'exec sleep 3600' }));
    const a = await agentOn(dir, ['--max-pods=1']);
    await a.waitForLog(/Pod rejected at admission.*OutOfpods/);
    const running = [...(await containersOf(cri, 'a')), ...(await containersOf(cri, 'b'))];
    await waitFor('one pod running', async () => [...(await containersOf(cri, 'a')), ...(await containersOf(cri, 'b'))].length === 1);
    assert.ok(running.length <= 1);
    await stopAndClean(a);
  });

  void it('runs the pods of a URL, sending the configured headers', async () => {
    const image = containerd.images.busybox;
    const seen: IncomingHttpHeaders[] = [];
    const body = stringify({
      apiVersion: 'v1', kind: 'PodList',
      items: ['u1', 'u2'].map((name) => ({
        apiVersion: 'v1', kind: 'Pod', metadata: { name },
        spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
      })),
    });
    const server: Server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(body);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((r) => server.close(r)));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const a = await agentOn(undefined, [`--manifest-url=http://127.0.0.1:${port}/pods`, '--manifest-url-header=X-Token:secret', '--http-check-frequency=1s']);
    await waitFor('both URL pods', async () => (await runningContainer(cri, 'u1')) !== undefined && (await runningContainer(cri, 'u2')) !== undefined, { timeoutMs: 30_000 });
    assert.equal(seen[0]?.['x-token'], 'secret');
    await stopAndClean(a);
  });

  void it('mounts hostPath volumes with type checks and memory-backed emptyDirs', async () => {
    const dir = await tempDir('nodeagent-vol-');
    const host = await tempDir('nodeagent-hostpath-');
    await writeFile(join(host, 'greeting'), 'hello from the host\n');
    const image = containerd.images.busybox;
    await writeManifest(dir, 'vol.yaml', podManifest({
      name: 'vol', image, hostNetwork: true, command: 'exec sleep 3600',
      extraContainer: { volumeMounts: [{ name: 'h', mountPath: '/host', readOnly: true }, { name: 'm', mountPath: '/cache' }, { name: 'h', mountPath: '/sub', subPath: 'made' }] },
      extraSpec: { volumes: [{ name: 'h', hostPath: { path: host, type: 'Directory' } }, { name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } }] },
    }));
    await writeManifest(dir, 'wrongtype.yaml', podManifest({
      name: 'wrongtype', image, hostNetwork: true, command: 'exec sleep 3600',
      extraSpec: { volumes: [{ name: 'f', hostPath: { path: join(host, 'greeting'), type: 'Directory' } }] },
      extraContainer: { volumeMounts: [{ name: 'f', mountPath: '/f' }] },
    }));
    const a = await agentOn(dir);
    const c = await waitFor('the volume pod', () => runningContainer(cri, 'vol'), { timeoutMs: 30_000 });
    const exec = async (cmd: string): Promise<{ out: string; code: number }> => {
      const r = await cri.execSync({ containerId: c.id, cmd: ['sh', '-c', cmd], timeout: 10 });
      return { out: r.stdout.toString() + r.stderr.toString(), code: r.exitCode };
    };
    assert.equal((await exec('cat /host/greeting')).out, 'hello from the host\n');
    assert.notEqual((await exec('touch /host/x')).code, 0, 'a readOnly mount refuses writes');
    assert.match((await exec('grep " /cache " /proc/mounts')).out, /^tmpfs \/cache tmpfs .*size=8192k/);
    assert.equal((await exec('echo hi > /sub/f && cat /sub/f')).out, 'hi\n');
    await a.waitForLog(/wrongtype.*(Directory|directory)/);
    assert.equal(await runningContainer(cri, 'wrongtype'), undefined);
    await stopAndClean(a);
  });
});

void describe('modes', () => {
  void it('--runonce starts the pods, prints their status and exits 0', async () => {
    const dir = await tempDir('nodeagent-once-');
    const image = containerd.images.busybox;
    await writeFile(join(dir, 'r.yaml'), podManifest({ name: 'r', image, hostNetwork: true, command: 'exec sleep 3600' }));
    await writeFile(join(dir, 'done.yaml'), podManifest({ name: 'done', image, hostNetwork: true, restartPolicy: 'Never', command: 'exit 0' }));
    const a = await agentOn(dir, ['--runonce', '--enable-server=false'], true);
    assert.equal(await a.exited(), 0, a.logs());
    assert.match(a.logs(), new RegExp(`pod "r-${NODE}_default": Running main=running`));
    // Started and already done, or still running when the status was printed: both are success.
    assert.match(a.logs(), new RegExp(`pod "done-${NODE}_default": (Succeeded main=terminated\\(0\\)|Running main=running)`));
    assert.ok(await runningContainer(cri, 'r'), 'the containers keep running after --runonce exits');
    for (const s of await cri.listPodSandbox()) {
      await cri.stopPodSandbox(s.id);
      await cri.removePodSandbox(s.id);
    }
  });

  void it('waits for a runtime that is down at start, without crashing', async () => {
    const a = await startAgentProcess({
      endpoint: 'unix:///nonexistent/containerd.sock', cgroupRoot: containerd.cgroupRoot, noWait: true,
      args: [`--hostname-override=${NODE}`],
    });
    cleanups.push(() => a.kill());
    await a.waitForLog(/Container runtime not ready; retrying.*nonexistent\/containerd\.sock/);
    // Something that must not happen: the agent exiting within a few retry periods.
    const outcome = await Promise.race([a.exited().then(() => 'exited'), delay(2500).then(() => 'still waiting')]);
    assert.equal(outcome, 'still waiting', a.logs());
    await a.stop();
  });
});

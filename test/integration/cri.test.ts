/**
 * The CRI client against a real containerd 1.6 (started by test/helpers/containerd.ts) and a
 * local docker-registry: every message the agent uses, on host-network and CNI pods.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isNotFound, isOrchError, isTimeout, type OrchError } from '../../src/api/errors.js';
import { connectCri, int64, type CriClient, type PodSandboxConfig } from '../../src/agent/runtime/cri/index.js';
import { Cleanups, freePort, processesUnder, readTcp, requireBinaries, startContainerd, startRuntimeWithRegistry } from '../helpers/containerd.js';
import type { ContainerdInstance, RegistryInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';

const RUN = randomUUID().slice(0, 8);
const MiB = 1024 * 1024;

function sandboxConfig(ctrd: ContainerdInstance, name: string, network: 'NODE' | 'POD', extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig {
  const uid = randomUUID();
  return {
    metadata: { name, uid, namespace: 'cri-test', attempt: 0 },
    hostname: network === 'NODE' ? '' : name, // a host-network pod must have an empty hostname
    logDirectory: path.join(ctrd.logDir, uid),
    labels: { test: RUN, pod: name },
    annotations: { 'cri-test/pod': name },
    linux: {
      cgroupParent: `${ctrd.cgroupRoot}/pod${uid}`,
      securityContext: { namespaceOptions: { network, pid: 'CONTAINER', ipc: 'POD' } },
    },
    ...extra,
  };
}

function tagOf(ref: string): string {
  return ref.slice(ref.lastIndexOf(':') + 1);
}

async function cgroupValue(config: PodSandboxConfig, id: string, file: string): Promise<string> {
  const controller = file.split('.')[0] ?? '';
  const text = await readFile(path.join('/sys/fs/cgroup', controller, config.linux?.cgroupParent ?? '', id, file), 'utf8');
  return text.trim();
}

async function removeAllPods(cri: CriClient): Promise<void> {
  for (const pod of await cri.listPodSandbox()) {
    await cri.stopPodSandbox(pod.id);
    await cri.removePodSandbox(pod.id);
  }
}

function expectCode(code: string): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(isOrchError(err), `not an OrchError: ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  };
}

void describe('CRI v1 against a real containerd', { timeout: 240_000 }, () => {
  const cleanups = new Cleanups();
  let registry: RegistryInstance;
  let ctrd: ContainerdInstance;
  let cri: CriClient;

  before(async () => {
    ({ registry, ctrd, cri } = await startRuntimeWithRegistry(cleanups));
    cleanups.push(() => removeAllPods(cri));
  });

  after(() => cleanups.run());

  void it('Version, Status and UpdateRuntimeConfig', async () => {
    const version = await cri.version('v1');
    assert.equal(version.runtimeName, 'containerd');
    assert.equal(version.runtimeApiVersion, 'v1');
    assert.match(version.runtimeVersion, /^1\.6\./);
    const status = await cri.status({ verbose: true });
    const conditions = new Map(status.status?.conditions.map((c) => [c.type, c.status]));
    assert.equal(conditions.get('RuntimeReady'), true);
    assert.equal(conditions.get('NetworkReady'), true);
    assert.ok(Object.keys(status.info).length > 0, 'verbose status has info');
    await cri.updateRuntimeConfig({ networkConfig: { podCidr: ctrd.subnet } });
  });

  void it('ImageStatus before PullImage, from the registry and from the local import; ListImages; ImageFsInfo', async () => {
    const remote = registry.images.busybox;
    assert.equal((await cri.imageStatus({ image: { image: remote } })).image, null);
    const imageRef = await cri.pullImage({ image: { image: remote } });
    assert.equal(imageRef, ctrd.imageIds.busybox, 'a reproducible build: the pulled image is the imported one');
    const pulled = (await cri.imageStatus({ image: { image: remote }, verbose: true })).image;
    assert.ok(pulled);
    assert.ok(pulled.repoTags.includes(remote));
    assert.ok(pulled.repoTags.includes(ctrd.images.busybox));
    assert.ok(int64(pulled.size) > 1_000_000n);
    assert.equal(pulled.pinned, false);
    const local = (await cri.imageStatus({ image: { image: ctrd.images.pause } })).image;
    assert.equal(local?.id, ctrd.imageIds.pause);
    const ids = (await cri.listImages()).map((i) => i.id).sort();
    assert.deepEqual(ids, [ctrd.imageIds.busybox, ctrd.imageIds.pause].sort());
    // containerd 1.6 ignores the ListImages filter: accepted, but every image comes back.
    assert.ok((await cri.listImages({ image: ctrd.images.pause })).some((i) => i.id === ctrd.imageIds.pause));
    const fs = await cri.imageFsInfo();
    const [imageFs] = fs.imageFilesystems;
    assert.ok(imageFs);
    assert.ok(imageFs.fsId?.mountpoint.startsWith(ctrd.dir));
    assert.ok(int64(imageFs.timestamp) > 0n);
  });

  void describe('a host-network pod', () => {
    let config: PodSandboxConfig;
    let podId = '';
    let containerId = '';
    let createdAt = 0n;

    void it('RunPodSandbox and PodSandboxStatus', async () => {
      config = sandboxConfig(ctrd, 'host-pod', 'NODE');
      podId = await cri.runPodSandbox({ config });
      const { status, containersStatuses, timestamp } = await cri.podSandboxStatus({ podSandboxId: podId });
      assert.ok(status && int64(status.createdAt) > 0n);
      const { id, state, metadata, network, linux, labels, annotations } = status;
      assert.deepEqual(
        { id, state, metadata, ip: network?.ip, net: linux?.namespaces?.options?.network, labels, annotations },
        { id: podId, state: 'SANDBOX_READY', metadata: config.metadata, ip: '', net: 'NODE', labels: config.labels, annotations: config.annotations },
      );
      assert.deepEqual(containersStatuses, []); // containerd 1.6 fills neither (fields 3 and 4)
      assert.equal(timestamp, '0');
    });

    void it('CreateContainer with command, env, working dir, mounts, labels, log path and resources; StartContainer', async () => {
      const data = path.join(ctrd.dir, 'data', podId);
      await mkdir(data, { recursive: true });
      await writeFile(path.join(data, 'hello.txt'), 'from-the-host\n');
      containerId = await cri.createContainer({
        podSandboxId: podId,
        sandboxConfig: config,
        config: {
          metadata: { name: 'main', attempt: 0 },
          image: { image: ctrd.images.busybox },
          command: ['/bin/sh', '-c'],
          args: ['echo "$GREETING from $(pwd)"; cat /data/hello.txt; touch /data/x || echo read-only; exec sleep 3600'],
          envs: [{ key: 'GREETING', value: 'hello' }],
          workingDir: '/tmp',
          mounts: [{ containerPath: '/data', hostPath: data, readonly: true }],
          labels: { test: RUN, role: 'main' },
          annotations: { 'cri-test/container': 'main' },
          logPath: 'main/0.log',
          linux: {
            resources: { cpuPeriod: 100_000, cpuQuota: 50_000, cpuShares: 256, memoryLimitInBytes: 64 * MiB },
            // as the kubelet does: the container's own namespaces, stated explicitly (PID: its own)
            securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } },
          },
        },
      });
      const created = (await cri.containerStatus({ containerId })).status;
      assert.equal(created?.state, 'CONTAINER_CREATED');
      await cri.startContainer(containerId);
      const log = path.join(config.logDirectory ?? '', 'main', '0.log');
      const text = await waitFor('the container log', async () => {
        const t = await readFile(log, 'utf8').catch(() => ''); // not written yet
        return t.includes('read-only') && t;
      });
      assert.match(text, /stdout F hello from \/tmp\n/);
      assert.match(text, /stdout F from-the-host\n/);
      assert.equal(await cgroupValue(config, containerId, 'memory.limit_in_bytes'), String(64 * MiB));
      assert.equal(await cgroupValue(config, containerId, 'cpu.cfs_quota_us'), '50000');
      assert.equal(await cgroupValue(config, containerId, 'cpu.shares'), '256');
    });

    void it('ContainerStatus', async () => {
      const { status } = await cri.containerStatus({ containerId, verbose: true });
      assert.ok(status);
      assert.equal(status.state, 'CONTAINER_RUNNING');
      assert.deepEqual(status.metadata, { name: 'main', attempt: 0 });
      createdAt = int64(status.createdAt);
      assert.ok(createdAt > 0n && int64(status.startedAt) >= createdAt);
      assert.equal(status.finishedAt, '0');
      assert.equal(status.exitCode, 0);
      // containerd reports the image's first tag, not necessarily the reference the spec used
      const image = (await cri.imageStatus({ image: { image: ctrd.images.busybox } })).image;
      assert.ok(image?.repoTags.includes(status.image?.image ?? ''));
      assert.match(status.imageRef, /sha256:[0-9a-f]{64}$/);
      assert.ok(['', ctrd.imageIds.busybox].includes(status.imageId), 'field 17: empty from containerd 1.6');
      assert.equal(status.user, null);
      assert.equal(status.labels.role, 'main');
      assert.equal(status.annotations['cri-test/container'], 'main');
      assert.equal(status.logPath, path.join(config.logDirectory ?? '', 'main/0.log'));
      assert.ok(status.mounts.some((m) => m.containerPath === '/data' && m.readonly === true));
      assert.equal(status.resources?.linux?.memoryLimitInBytes, String(64 * MiB));
      assert.equal(status.resources.linux.cpuQuota, '50000');
    });

    void it('ListContainers with filters', async () => {
      const byLabel = await cri.listContainers({ labelSelector: { test: RUN, role: 'main' } });
      assert.deepEqual(byLabel.map((c) => c.id), [containerId]);
      const [c] = byLabel;
      assert.equal(c?.podSandboxId, podId);
      assert.equal(c.state, 'CONTAINER_RUNNING');
      assert.equal(int64(c.createdAt), createdAt);
      assert.equal(c.imageRef, ctrd.imageIds.busybox);
      assert.ok(['', ctrd.imageIds.busybox].includes(c.imageId), 'field 10: empty from containerd 1.6');
      assert.equal((await cri.listContainers({ podSandboxId: podId, state: { state: 'CONTAINER_RUNNING' } })).length, 1);
      assert.equal((await cri.listContainers({ id: containerId })).length, 1);
      assert.equal((await cri.listContainers({ labelSelector: { role: 'nope' } })).length, 0);
      assert.equal((await cri.listContainers({ state: { state: 'CONTAINER_EXITED' }, podSandboxId: podId })).length, 0);
    });

    void it('ExecSync: output, exit code, environment, timeout', async () => {
      const r = await cri.execSync({ containerId, cmd: ['sh', '-c', 'echo "out $GREETING"; echo err >&2; exit 3'], timeout: 10 });
      assert.equal(r.stdout.toString(), 'out hello\n');
      assert.equal(r.stderr.toString(), 'err\n');
      assert.equal(r.exitCode, 3);
      await assert.rejects(cri.execSync({ containerId, cmd: ['sleep', '30'], timeout: 1 }), (err: OrchError) => {
        assert.ok(isTimeout(err));
        assert.equal(err.code, 'CRI_TIMEOUT');
        return true;
      });
    });

    void it('a tiny runtimeRequestTimeout cancels the call with CRI_TIMEOUT naming the method', async () => {
      const impatient = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 300 });
      const started = Date.now();
      await assert.rejects(impatient.execSync({ containerId, cmd: ['sleep', '5'] }), (err: OrchError) => {
        assert.equal(err.code, 'CRI_TIMEOUT');
        assert.match(err.message, /ExecSync.*300 ms/);
        return true;
      });
      assert.ok(Date.now() - started < 3_000);
      impatient.close();
      assert.equal((await cri.version('v1')).runtimeName, 'containerd', 'the runtime is fine afterwards');
    });

    void it('Exec, Attach and PortForward return streaming URLs', async () => {
      const url = /^http:\/\/127\.0\.0\.1:\d+\/(exec|attach|portforward)\/\S+$/;
      assert.match(await cri.exec({ containerId, cmd: ['echo', 'hi'], stdout: true, stderr: true }), url);
      assert.match(await cri.attach({ containerId, stdout: true }), url);
      assert.match(await cri.portForward({ podSandboxId: podId, port: [8080] }), url);
    });

    void it('ContainerStats, ListContainerStats, PodSandboxStats, ListPodSandboxStats', async () => {
      const stats = await cri.containerStats(containerId);
      assert.equal(stats.attributes?.id, containerId);
      assert.ok(int64(stats.cpu?.usageCoreNanoSeconds?.value ?? '0') > 0n);
      assert.ok(int64(stats.memory?.workingSetBytes?.value ?? '0') > 0n);
      assert.equal((await cri.listContainerStats({ podSandboxId: podId })).length, 1);
      assert.equal((await cri.listContainerStats({ labelSelector: { role: 'nope' } })).length, 0);
      const pod = await cri.podSandboxStats(podId);
      assert.equal(pod.attributes?.id, podId);
      assert.ok(int64(pod.linux?.memory?.workingSetBytes?.value ?? '0') > 0n);
      assert.deepEqual(pod.linux?.containers.map((c) => c.attributes?.id), [containerId]);
      assert.deepEqual((await cri.listPodSandboxStats({ id: podId })).map((s) => s.attributes?.id), [podId]);
    });

    void it('UpdateContainerResources and ReopenContainerLog', async () => {
      await cri.updateContainerResources({ containerId, linux: { memoryLimitInBytes: 128 * MiB, cpuQuota: 20_000, cpuPeriod: 100_000 } });
      assert.equal(await cgroupValue(config, containerId, 'memory.limit_in_bytes'), String(128 * MiB));
      const { status } = await cri.containerStatus({ containerId });
      assert.equal(status?.resources?.linux?.memoryLimitInBytes, String(128 * MiB));
      await cri.reopenContainerLog(containerId);
    });

    void it('StopContainer waits the grace period, then kills', async () => {
      const started = Date.now();
      await cri.stopContainer({ containerId, timeout: 1 }); // sleep as PID 1 ignores SIGTERM
      assert.ok(Date.now() - started >= 900, `stopped after ${Date.now() - started} ms`);
      const { status } = await cri.containerStatus({ containerId });
      assert.equal(status?.state, 'CONTAINER_EXITED');
      assert.equal(status.exitCode, 137);
      assert.equal(status.reason, 'Error');
      assert.ok(int64(status.finishedAt) >= int64(status.startedAt));
      await cri.stopContainer({ containerId, timeout: 0 }); // idempotent
    });

    void it('RemoveContainer, then NotFound', async () => {
      await cri.removeContainer(containerId);
      await assert.rejects(cri.containerStatus({ containerId }), (err: unknown) => isNotFound(err));
      await assert.rejects(cri.containerStats(containerId), expectCode('CRI_NOT_FOUND'));
      assert.equal((await cri.listContainers({ podSandboxId: podId })).length, 0);
    });
  });

  void describe('a CNI pod with a port mapping', () => {
    let config: PodSandboxConfig;
    let podId = '';
    let hostPort = 0;

    void it('gets a pod IP of the subnet, DNS config and hostname, and serves on the host port', async () => {
      hostPort = await freePort();
      config = sandboxConfig(ctrd, 'cni-pod', 'POD', {
        portMappings: [{ protocol: 'TCP', containerPort: 8080, hostPort, hostIp: '127.0.0.1' }],
        dnsConfig: { servers: ['10.0.0.10'], searches: ['cri-test.svc'], options: ['ndots:5'] },
      });
      podId = await cri.runPodSandbox({ config });
      const { status } = await cri.podSandboxStatus({ podSandboxId: podId });
      const ip = status?.network?.ip ?? '';
      assert.ok(ip.startsWith(ctrd.subnet.split('.').slice(0, 3).join('.') + '.'), `pod IP ${ip} in ${ctrd.subnet}`);
      const containerId = await cri.createContainer({
        podSandboxId: podId,
        sandboxConfig: config,
        config: {
          metadata: { name: 'server', attempt: 0 },
          image: { image: `busybox:${tagOf(ctrd.images.busybox)}` },
          command: ['nc', '-ll', '-p', '8080', '-e', 'echo', 'hi'],
          logPath: 'server/0.log',
        },
      });
      await cri.startContainer(containerId);
      assert.equal(await waitFor('the host port', async () => (await readTcp(hostPort, '127.0.0.1').catch(() => '')) || false), 'hi\n');
      assert.equal(await readTcp(8080, ip), 'hi\n');
      const hostname = await cri.execSync({ containerId, cmd: ['hostname'] });
      assert.equal(hostname.stdout.toString(), 'cni-pod\n');
      const resolv = (await cri.execSync({ containerId, cmd: ['cat', '/etc/resolv.conf'] })).stdout.toString();
      assert.match(resolv, /nameserver 10\.0\.0\.10/);
      assert.match(resolv, /search cri-test\.svc/);
    });

    void it('ListPodSandbox filters; StopPodSandbox and RemovePodSandbox are idempotent', async () => {
      const mine = await cri.listPodSandbox({ labelSelector: { test: RUN } });
      assert.deepEqual(mine.map((p) => p.metadata?.name).sort(), ['cni-pod', 'host-pod']);
      assert.equal((await cri.listPodSandbox({ id: podId }))[0]?.state, 'SANDBOX_READY');
      assert.equal((await cri.listPodSandbox({ labelSelector: { pod: 'cni-pod' }, state: { state: 'SANDBOX_READY' } })).length, 1);
      await cri.stopPodSandbox(podId);
      await cri.stopPodSandbox(podId);
      assert.equal((await cri.podSandboxStatus({ podSandboxId: podId })).status?.state, 'SANDBOX_NOTREADY');
      assert.equal((await cri.listPodSandbox({ id: podId, state: { state: 'SANDBOX_READY' } })).length, 0);
      const containers = await cri.listContainers({ podSandboxId: podId });
      assert.ok(containers.every((c) => c.state === 'CONTAINER_EXITED'));
      await assert.rejects(readTcp(hostPort, '127.0.0.1').then((d) => (d === '' ? Promise.reject(new Error('closed')) : d)));
      await cri.removePodSandbox(podId);
      await cri.removePodSandbox(podId);
      await assert.rejects(cri.podSandboxStatus({ podSandboxId: podId }), expectCode('CRI_NOT_FOUND'));
      assert.equal((await cri.listContainers({ podSandboxId: podId })).length, 0);
    });
  });

  void it('RemoveImage removes every tag of the image; short names pull through the local registry', async () => {
    await removeAllPods(cri);
    await cri.removeImage({ image: registry.images.busybox });
    assert.equal((await cri.imageStatus({ image: { image: ctrd.images.busybox } })).image, null);
    await cri.removeImage({ image: registry.images.busybox }); // idempotent
    const shortName = `busybox:${tagOf(ctrd.images.busybox)}`;
    assert.equal(await cri.pullImage({ image: { image: shortName } }), ctrd.imageIds.busybox);
    assert.ok((await cri.imageStatus({ image: { image: ctrd.images.busybox } })).image);
  });
});

void describe('two containerd instances side by side', { timeout: 120_000 }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  void it('have their own sockets, bridges, subnets and pods', async () => {
    const started = await Promise.allSettled([startContainerd(), startContainerd()]);
    const instances = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const i of instances) cleanups.push(() => i.stop());
    const [a, b] = instances;
    assert.ok(a && b, `started ${instances.length} of 2`);
    assert.notEqual(a.endpoint, b.endpoint);
    assert.notEqual(a.bridge, b.bridge);
    assert.notEqual(a.subnet, b.subnet);
    const [ca, cb] = instances.map((i) => connectCri({ runtimeEndpoint: i.socketPath }));
    assert.ok(ca && cb);
    cleanups.push(() => {
      ca.close();
      cb.close();
    });
    const run = async (cri: CriClient, ctrd: ContainerdInstance): Promise<string> => {
      const config = sandboxConfig(ctrd, 'twin', 'POD');
      const id = await cri.runPodSandbox({ config });
      return (await cri.podSandboxStatus({ podSandboxId: id })).status?.network?.ip ?? '';
    };
    const [ipA, ipB] = await Promise.all([run(ca, a), run(cb, b)]);
    assert.ok(ipA.startsWith(a.subnet.replace(/0\/24$/, '')), `${ipA} in ${a.subnet}`);
    assert.ok(ipB.startsWith(b.subnet.replace(/0\/24$/, '')), `${ipB} in ${b.subnet}`);
    assert.equal((await ca.listPodSandbox()).length, 1);
    assert.equal((await cb.listPodSandbox()).length, 1);
    await b.stop();
    await assert.rejects(cb.version('v1'), expectCode('CRI_UNAVAILABLE'));
    assert.equal((await ca.version('v1')).runtimeName, 'containerd');
    assert.equal((await ca.listPodSandbox())[0]?.state, 'SANDBOX_READY');
    assert.deepEqual(await processesUnder(b.dir), []);
  });
});

void describe('without a runtime', () => {
  void it('the helper fails, naming a missing binary and the install script', async () => {
    await assert.rejects(requireBinaries('startContainerd', ['runc', '/nonexistent/containerd']), (err: Error) => {
      assert.match(err.message, /"\/nonexistent\/containerd" not found.*bash scripts\/install-packages\.sh/);
      return true;
    });
  });

  void it('rejects with CRI_UNAVAILABLE naming the endpoint, without crashing the process', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', record);
    const endpoint = `unix:///tmp/nodeagent-absent-${RUN}/containerd.sock`;
    const cri = connectCri({ runtimeEndpoint: endpoint, requestTimeoutMs: 5_000 });
    const calls = [cri.version('v1'), cri.listPodSandbox(), cri.imageFsInfo(), cri.pullImage({ image: { image: 'x' } })];
    const results = await Promise.allSettled(calls);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      expectCode('CRI_UNAVAILABLE')(r.reason);
      assert.ok((r.reason as OrchError).message.includes(endpoint));
    }
    cri.close();
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', record);
    assert.deepEqual(unhandled, []);
    assert.throws(() => connectCri({ runtimeEndpoint: 'tcp://127.0.0.1:10010' }), /--container-runtime-endpoint/);
  });
});

/**
 * The security context as a container sees it, on real containers: users and groups (`id`),
 * fsGroup on emptyDir volumes, runAsNonRoot against the image's user, a read-only root,
 * capabilities (dropped CHOWN, added NET_ADMIN, privileged), no_new_privs, seccomp profiles
 * (RuntimeDefault, Unconfined, Localhost under <rootDir>/seccomp, and seccompDefault), host and
 * shared namespaces, and sysctls (safe ones, allowed unsafe ones, admission of forbidden ones).
 */
import assert from 'node:assert/strict';
import { readlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import { createRuntimeManager, sysctlAdmission } from '../../src/agent/kuberuntime/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { waitFor } from '../helpers/wait.js';
import { containerStatus, startHealthyNode, type HealthyNode } from './healthy-harness.js';
import { realClock } from '../../src/api/clock.js';
import type { NodePod } from '../../src/api/pod/index.js';

const SERVE = 'trap "exit 0" TERM; while true; do sleep 0.2; done';

void describe('the security context inside real containers', { timeout: 300_000 }, () => {
  let node: HealthyNode;
  let busybox = '';
  const serve = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: busybox, command: ['sh', '-c', SERVE], ...extra });
  const run = async (pod: NodePod): Promise<void> => {
    node.run(pod);
    await node.waitStatus(pod, 'every container running', (s) => (s.containerStatuses ?? []).every((c) => c.state?.running !== undefined));
  };
  const sh = async (pod: NodePod, container: string, script: string) => node.exec(pod, container, ['sh', '-c', script]);

  before(async () => {
    node = await startHealthyNode();
    busybox = node.ctrd.images.busybox;
  });
  after(async () => {
    await node.stop();
  });

  void it('runAsUser, runAsGroup, supplementalGroups and fsGroup (emptyDir group-owned with setgid)', async () => {
    const pod = node.pod('ids', {
      securityContext: { runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [2000], fsGroup: 4000 },
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [serve('app', { volumeMounts: [{ name: 'data', mountPath: '/data' }] }), serve('override', { securityContext: { runAsUser: 1001 } })],
    });
    await run(pod);
    assert.deepEqual((await sh(pod, 'app', 'id -u; id -g; id -G')).stdout.split('\n'), ['1000', '3000', '3000 2000 4000', '']);
    assert.equal((await sh(pod, 'override', 'id -u; id -g')).stdout, '1001\n3000\n');
    // Polled: the volume manager resets the directory's mode when it prepares the volume again, and the pod's sync restores the bits right after.
    await waitFor('the emptyDir group-owned and setgid', async () => (await sh(pod, 'app', 'stat -c "%g %A" /data')).stdout === '4000 drwxrwsrwx\n', { timeoutMs: 5000 });
    assert.equal((await sh(pod, 'app', 'touch /data/f && stat -c %g /data/f')).stdout, '4000\n', 'new files inherit the group');
    node.remove(pod);
  });

  void it('runAsNonRoot: CreateContainerConfigError for an image running as root, fine with a non-root runAsUser', async () => {
    const pod = node.pod('nonroot', { securityContext: { runAsNonRoot: true }, containers: [serve('root'), serve('user', { securityContext: { runAsUser: 1000 } })] });
    node.run(pod);
    const s = await node.waitStatus(pod, 'the root container refused', (x) => containerStatus(x, 'root')?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.equal(containerStatus(s, 'root')?.state?.waiting?.message, `container has runAsNonRoot and image will run as root (pod: "nonroot_healthy(${pod.metadata.uid})", container: root)`);
    await node.waitStatus(pod, 'the user container running', (x) => containerStatus(x, 'user')?.state?.running !== undefined);
    node.remove(pod);
  });

  void it('read-only root, capabilities dropped and added, privileged, no_new_privs', async () => {
    const pod = node.pod('confined', {
      containers: [
        serve('plain'),
        serve('readonly', { securityContext: { readOnlyRootFilesystem: true } }),
        serve('nochown', { securityContext: { capabilities: { drop: ['CHOWN'] } } }),
        serve('netadmin', { securityContext: { capabilities: { add: ['NET_ADMIN'] } } }),
        serve('privileged', { securityContext: { privileged: true } }),
        serve('nnp', { securityContext: { allowPrivilegeEscalation: false } }),
      ],
    });
    await run(pod);
    assert.equal((await sh(pod, 'plain', 'touch /x')).exitCode, 0);
    const ro = await sh(pod, 'readonly', 'touch /x');
    assert.notEqual(ro.exitCode, 0);
    assert.match(ro.stderr, /Read-only file system/);
    assert.equal((await sh(pod, 'plain', 'touch /tmp/f && chown 1 /tmp/f')).exitCode, 0);
    const chown = await sh(pod, 'nochown', 'touch /tmp/f && chown 1 /tmp/f');
    assert.notEqual(chown.exitCode, 0);
    assert.match(chown.stderr, /Operation not permitted/);
    assert.notEqual((await sh(pod, 'plain', 'ip link set lo mtu 1400')).exitCode, 0, 'NET_ADMIN is not a default capability');
    assert.equal((await sh(pod, 'netadmin', 'ip link set lo mtu 1400')).exitCode, 0);
    const capEff = async (c: string) => BigInt(`0x${(await sh(pod, c, 'grep CapEff /proc/self/status')).stdout.split(/\s+/)[1] ?? '0'}`);
    assert.ok((await capEff('privileged')) > (await capEff('netadmin')), 'privileged has every capability');
    assert.equal(((await capEff('privileged')) >> 21n) & 1n, 1n, 'CAP_SYS_ADMIN');
    assert.equal((await sh(pod, 'nnp', 'grep NoNewPrivs /proc/self/status')).stdout, 'NoNewPrivs:\t1\n');
    assert.equal((await sh(pod, 'plain', 'grep NoNewPrivs /proc/self/status')).stdout, 'NoNewPrivs:\t0\n');
    node.remove(pod);
  });

  void it('seccomp: RuntimeDefault, Unconfined by default, a Localhost profile under <rootDir>/seccomp', async () => {
    await mkdir(path.join(node.rootDir, 'seccomp'), { recursive: true });
    await writeFile(path.join(node.rootDir, 'seccomp', 'deny-mkdir.json'), JSON.stringify({
      defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO' }],
    }));
    const pod = node.pod('seccomp', {
      containers: [
        serve('default'),
        serve('runtime', { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }),
        serve('local', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'deny-mkdir.json' } } }),
      ],
    });
    await run(pod);
    const mode = async (c: string) => (await sh(pod, c, 'grep "^Seccomp:" /proc/self/status')).stdout.trim();
    assert.equal(await mode('default'), 'Seccomp:\t0');
    assert.equal(await mode('runtime'), 'Seccomp:\t2');
    assert.equal(await mode('local'), 'Seccomp:\t2');
    assert.equal((await sh(pod, 'default', 'mkdir /tmp/d')).exitCode, 0);
    const denied = await sh(pod, 'local', 'mkdir /tmp/d');
    assert.notEqual(denied.exitCode, 0);
    assert.match(denied.stderr, /Operation not permitted/);
    node.remove(pod);
  });

  void it('seccompDefault: containers without a profile get RuntimeDefault, Unconfined stays unconfined', async () => {
    const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('seccomp-default');
    const manager = createRuntimeManager({
      clock: realClock,
      runtime: node.cri, images: node.cri, logger, podLogsRoot: node.ctrd.logDir, seccompDefault: true,
      dns: { clusterDNS: [], clusterDomain: 'cluster.local', resolvConf: '' }, hostIPs: () => ['127.0.0.1'], nodeName: 'n',
      volumes: { mountsFor: () => Promise.resolve([]) }, cgroupParent: (p) => Promise.resolve(`${node.ctrd.cgroupRoot}/pod${p.metadata.uid}`),
    });
    const pod = node.pod('seccomp-default', { hostNetwork: true, containers: [serve('unset'), serve('unconfined', { securityContext: { seccompProfile: { type: 'Unconfined' } } })] });
    const uid = pod.metadata.uid;
    assert.deepEqual((await manager.syncPod(pod, await manager.getPodStatus(uid, 'seccomp-default', 'healthy'))).errors, []);
    const ids = await waitFor('both running', async () => {
      const s = await manager.getPodStatus(uid, 'seccomp-default', 'healthy');
      const running = s.containers.filter((c) => c.state === 'running');
      return running.length === 2 && new Map(running.map((c) => [c.name, c.id]));
    });
    const mode = async (name: string) => (await node.cri.execSync({ containerId: ids.get(name) ?? '', cmd: ['grep', '^Seccomp:', '/proc/self/status'], timeout: 10 })).stdout.toString().trim();
    assert.equal(await mode('unset'), 'Seccomp:\t2');
    assert.equal(await mode('unconfined'), 'Seccomp:\t0');
    const running = (await manager.listPods()).find((p) => p.uid === uid);
    assert.ok(running);
    await manager.killPod(running, { gracePeriodSeconds: 0 });
    await manager.removePod(uid);
  });

  void it('hostPID, hostIPC and shareProcessNamespace', async () => {
    const host = node.pod('hostns', { hostPID: true, hostIPC: true, containers: [serve('app')] });
    const shared = node.pod('sharedns', { shareProcessNamespace: true, containers: [serve('app'), { name: 'marker', image: busybox, command: ['sleep', '1234567'] }] });
    const alone = node.pod('ownns', { containers: [serve('app')] });
    await Promise.all([run(host), run(shared), run(alone)]);
    const ns = async (pod: NodePod, kind: string) => (await sh(pod, 'app', `readlink /proc/self/ns/${kind}`)).stdout.trim();
    assert.equal(await ns(host, 'pid'), readlinkSync('/proc/self/ns/pid'));
    assert.equal(await ns(host, 'ipc'), readlinkSync('/proc/self/ns/ipc'));
    assert.notEqual(await ns(alone, 'pid'), readlinkSync('/proc/self/ns/pid'));
    assert.notEqual(await ns(alone, 'ipc'), readlinkSync('/proc/self/ns/ipc'));
    assert.match((await sh(shared, 'app', 'ps')).stdout, /sleep 1234567/, 'the other container is visible');
    assert.doesNotMatch((await sh(alone, 'app', 'ps')).stdout, /sleep 1234567/);
    for (const p of [host, shared, alone]) node.remove(p);
  });

  void it('sysctls: the safe set and allowed unsafe ones reach the pod; forbidden ones are refused at admission', async () => {
    const pod = node.pod('sysctls', {
      securityContext: { sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '20000 30000' }, { name: 'net/core/somaxconn', value: '1000' }, { name: 'kernel.shm_rmid_forced', value: '1' }] },
      containers: [serve('app')],
    });
    assert.deepEqual(sysctlAdmission(pod, ['net.core.*']), { admit: true });
    assert.deepEqual(sysctlAdmission(pod, []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted' });
    const hostNet = node.pod('sysctls-hostnet', { hostNetwork: true, securityContext: { sysctls: [{ name: 'net.ipv4.tcp_syncookies', value: '1' }] }, containers: [serve('app')] });
    assert.deepEqual(sysctlAdmission(hostNet, []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled' });
    await run(pod);
    assert.equal((await sh(pod, 'app', 'cat /proc/sys/net/ipv4/ip_local_port_range')).stdout.replace(/\s+/g, ' ').trim(), '20000 30000');
    assert.equal((await sh(pod, 'app', 'cat /proc/sys/net/core/somaxconn')).stdout, '1000\n');
    assert.equal((await sh(pod, 'app', 'cat /proc/sys/kernel/shm_rmid_forced')).stdout, '1\n');
    node.remove(pod);
  });
});

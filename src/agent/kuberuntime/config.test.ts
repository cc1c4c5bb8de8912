import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { DEFAULT_MASKED_PATHS, makeContainerConfig, verifyRunAsNonRoot, type ContainerConfigInput } from './container-config.js';
import { hashContainer, hashContainerWithoutResources } from './hash.js';
import { makeSandboxConfig, namespaceOptions, parsePodLogsDirectoryName, podHostnameAndDomain, podLogsDirectory, portMappings, sandboxHostname, sysctlName } from './sandbox-config.js';
import type { NodePod } from '../../api/pod/index.js';

const app: Container = {
  name: 'app',
  image: 'busybox:1.35',
  command: ['sh', '-c', 'echo $(GREETING)'],
  args: ['$(POD)'],
  workingDir: '/tmp',
  env: [{ name: 'GREETING', value: 'hi' }, { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
  ports: [{ containerPort: 8080, hostPort: 18080, hostIP: '127.0.0.1' }, { containerPort: 53, protocol: 'UDP' }],
  resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
};

function pod(extra: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}): NodePod {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', labels: { app: 'web' }, annotations: { a: 'b' }, ...meta },
    spec: { containers: [app], terminationGracePeriodSeconds: 5, ...extra },
  };
}

void describe('sandbox config', () => {
  void it('has metadata, hostname, log directory, DNS, ports, labels, annotations, cgroup parent, namespaces and sysctls', () => {
    const p = pod({ securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }, { name: 'kernel/shm_rmid_forced', value: '1' }], runAsUser: 1000, fsGroup: 2000 } });
    const config = makeSandboxConfig({ pod: p, attempt: 2, podLogsRoot: '/logs', cgroupParent: '/na/podu-1', dns: { servers: ['10.0.0.10'] }, clusterDomain: 'cluster.local' });
    assert.deepEqual(config, {
      metadata: { name: 'web', namespace: 'shop', uid: 'u-1', attempt: 2 },
      hostname: 'web',
      logDirectory: '/logs/shop_web_u-1',
      dnsConfig: { servers: ['10.0.0.10'] },
      portMappings: [{ protocol: 'TCP', containerPort: 8080, hostPort: 18080, hostIp: '127.0.0.1' }, { protocol: 'UDP', containerPort: 53 }],
      labels: { app: 'web', 'io.orch.pod.uid': 'u-1', 'io.orch.pod.name': 'web', 'io.orch.pod.namespace': 'shop' },
      annotations: { a: 'b', 'io.orch.pod.terminationGracePeriod': '5' },
      linux: {
        cgroupParent: '/na/podu-1',
        sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0', 'kernel.shm_rmid_forced': '1' },
        securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, privileged: false, runAsUser: { value: 1000 }, supplementalGroups: [2000], seccomp: { profileType: 'Unconfined' } },
      },
    });
  });

  void it('host-network pods get an empty hostname', () => {
    assert.equal(sandboxHostname(pod({ hostNetwork: true, hostname: 'x' }), 'cluster.local'), '');
  });

  void it('hostname, subdomain, FQDN and truncation', () => {
    assert.deepEqual(podHostnameAndDomain(pod({ hostname: 'h', subdomain: 'sub' }), 'cluster.local'), { hostname: 'h', domain: 'sub.shop.svc.cluster.local' });
    assert.equal(sandboxHostname(pod({ hostname: 'h', subdomain: 'sub', setHostnameAsFQDN: true }), 'cluster.local'), 'h.sub.shop.svc.cluster.local');
    assert.equal(sandboxHostname(pod({ hostname: 'h', subdomain: 'sub' }), 'cluster.local'), 'h');
    const long = `${'a'.repeat(62)}-b-c`;
    assert.equal(podHostnameAndDomain(pod({}, { name: long }), '').hostname, 'a'.repeat(62));
    assert.throws(() => podHostnameAndDomain(pod({ hostname: 'Bad_Name' }), ''), { code: 'KUBERUNTIME_SANDBOX_CONFIG_INVALID' });
    assert.throws(() => sandboxHostname(pod({ hostname: 'h'.repeat(30), subdomain: 's'.repeat(30), setHostnameAsFQDN: true }), 'cluster.local'), /too long/);
  });

  void it('namespace options per hostNetwork, hostPID, hostIPC and shareProcessNamespace', () => {
    assert.deepEqual(namespaceOptions(pod({ hostNetwork: true, hostPID: true, hostIPC: true })), { network: 'NODE', pid: 'NODE', ipc: 'NODE' });
    assert.deepEqual(namespaceOptions(pod({ shareProcessNamespace: true })), { network: 'POD', pid: 'POD', ipc: 'POD' });
  });

  void it('ports of every container; sysctl names with slashes become dotted', () => {
    assert.equal(portMappings(pod({ containers: [app, { name: 'b', ports: [{ containerPort: 1 }] }] })).length, 3);
    assert.equal(sysctlName('net/ipv4/conf/eth0.100/forwarding'), 'net.ipv4.conf.eth0/100.forwarding');
    assert.equal(sysctlName('net.ipv4.conf.eth0/100.forwarding'), 'net.ipv4.conf.eth0/100.forwarding');
  });
});

function input(p: NodePod, extra: Partial<ContainerConfigInput> = {}): ContainerConfigInput {
  return {
    pod: p, container: app, init: false, imageRef: 'sha256:abc', restartCount: 3, podIPs: ['10.88.0.9'], hostIPs: ['192.168.0.2'], nodeName: 'n1',
    capacity: { cpuMilli: 2000, memoryBytes: 2 ** 32 }, resources: { cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100_000 },
    mounts: [{ containerPath: '/data', hostPath: '/host/data', readonly: true, propagation: 'HostToContainer' }], ...extra,
  };
}

void describe('pod log directories', () => {
  void it('are named <namespace>_<name>_<uid> and read back; other names belong to no pod', () => {
    const id = { namespace: 'kube-system', name: 'etcd-node.a', uid: '6f1c2d3e-0000-4000-8000-000000000001' };
    const dir = podLogsDirectory('/var/log/pods', id);
    assert.equal(dir, '/var/log/pods/kube-system_etcd-node.a_6f1c2d3e-0000-4000-8000-000000000001');
    assert.deepEqual(parsePodLogsDirectoryName(dir.slice('/var/log/pods/'.length)), id);
    for (const name of ['notes', 'a_b', 'A_b_c', 'a_b_c_d', '_b_c', 'a__c']) assert.equal(parsePodLogsDirectoryName(name), undefined, name);
  });
});

void describe('container config', () => {
  void it('has everything the runtime and the agent need', () => {
    const config = makeContainerConfig(input(pod(), { terminationMessageFile: '/pods/u-1/containers/app/abcd' }));
    assert.deepEqual(config.metadata, { name: 'app', attempt: 3 });
    assert.deepEqual(config.image, { image: 'sha256:abc', userSpecifiedImage: 'busybox:1.35' });
    assert.deepEqual(config.command, ['sh', '-c', 'echo hi']);
    assert.deepEqual(config.args, ['web']);
    assert.equal(config.workingDir, '/tmp');
    assert.deepEqual(config.envs, [{ key: 'GREETING', value: 'hi' }, { key: 'POD', value: 'web' }]);
    assert.deepEqual(config.mounts, [
      { containerPath: '/data', hostPath: '/host/data', readonly: true, propagation: 'PROPAGATION_HOST_TO_CONTAINER' },
      { containerPath: '/dev/termination-log', hostPath: '/pods/u-1/containers/app/abcd', readonly: false },
    ]);
    assert.equal(config.logPath, 'app/3.log');
    assert.deepEqual(config.labels, { 'io.orch.pod.uid': 'u-1', 'io.orch.pod.name': 'web', 'io.orch.pod.namespace': 'shop', 'io.orch.container.name': 'app', 'io.orch.container.type': 'regular' });
    assert.deepEqual(config.annotations, {
      'io.orch.container.hash': hashContainer(app), 'io.orch.container.hashWithoutResources': hashContainerWithoutResources(app), 'io.orch.container.restartCount': '3', 'io.orch.container.image': 'busybox:1.35',
      'io.orch.container.terminationMessagePath': '/dev/termination-log', 'io.orch.container.terminationMessagePolicy': 'File', 'io.orch.pod.terminationGracePeriod': '5',
    });
    assert.deepEqual(config.linux?.resources, { cpuShares: 102, cpuQuota: 20_000, cpuPeriod: 100_000, memoryLimitInBytes: 64 * 1024 * 1024, oomScoreAdj: 993 });
    const sc = config.linux.securityContext;
    assert.deepEqual(sc?.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
    assert.equal(sc.privileged, false);
    assert.deepEqual(sc.maskedPaths, DEFAULT_MASKED_PATHS);
  });

  void it('ephemeral containers are labelled so and join their target\'s process namespace unless the pod shares one', () => {
    const config = makeContainerConfig(input(pod(), { ephemeral: { targetId: 'target-id' } }));
    assert.equal(config.labels?.['io.orch.container.type'], 'ephemeral');
    assert.deepEqual(config.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'TARGET', ipc: 'POD', targetId: 'target-id' });
    const shared = makeContainerConfig(input(pod({ shareProcessNamespace: true }), { ephemeral: { targetId: 'target-id' } }));
    assert.deepEqual(shared.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'POD', ipc: 'POD' });
    assert.equal(makeContainerConfig(input(pod(), { ephemeral: {} })).linux?.securityContext?.namespaceOptions?.pid, 'CONTAINER');
  });

  void it('init containers are labelled so; the security context is applied, container over pod', () => {
    const c: Container = {
      name: 'init', image: 'busybox:1.35',
      securityContext: { runAsUser: 1001, readOnlyRootFilesystem: true, privileged: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    };
    const p = pod({ initContainers: [c], securityContext: { runAsUser: 5, runAsGroup: 6, supplementalGroups: [7] } });
    const config = makeContainerConfig(input(p, { container: c, init: true }));
    assert.equal(config.labels?.['io.orch.container.type'], 'init');
    assert.deepEqual(config.linux?.securityContext, {
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, privileged: true, readonlyRootfs: true, runAsUser: { value: 1001 }, runAsGroup: { value: 6 },
      supplementalGroups: [7], capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] }, noNewPrivs: true, maskedPaths: [], readonlyPaths: [],
      seccomp: { profileType: 'RuntimeDefault' },
    });
  });

  void it('puts the cpuset the resource managers chose into the resources', () => {
    assert.deepEqual(
      [makeContainerConfig(input(pod(), { cpuset: { cpus: '1', mems: '0' } })).linux?.resources?.cpusetCpus, makeContainerConfig(input(pod(), { cpuset: { cpus: '1', mems: '0' } })).linux?.resources?.cpusetMems],
      ['1', '0'],
    );
    const none = makeContainerConfig(input(pod(), { cpuset: {} })).linux?.resources;
    assert.equal(none?.cpusetCpus, undefined);
    assert.equal(none?.cpusetMems, undefined);
  });

  void it('host-network pods get the node namespaces; env errors throw', () => {
    assert.equal(makeContainerConfig(input(pod({ hostNetwork: true }))).linux?.securityContext?.namespaceOptions?.network, 'NODE');
    const bad: Container = { name: 'b', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] };
    assert.throws(() => makeContainerConfig(input(pod(), { container: bad })), { code: 'KUBERUNTIME_ENV_REFERENCE_NOT_FOUND' });
  });

  void it('verifyRunAsNonRoot as upstream', () => {
    const nonRoot = (sc: Container['securityContext']): Container => ({ ...app, securityContext: { runAsNonRoot: true, ...sc } });
    const check = (c: Container, image: { uid?: number; username: string }, p: NodePod = pod()) => () => {
      verifyRunAsNonRoot(p, c, image);
    };
    assert.doesNotThrow(check(app, { uid: 0, username: '' }));
    assert.throws(check(nonRoot({ runAsUser: 0 }), { username: '' }), /runAsUser breaks non-root policy/);
    assert.doesNotThrow(check(nonRoot({ runAsUser: 1 }), { uid: 0, username: '' }));
    assert.throws(check(nonRoot({}), { uid: 0, username: '' }), { code: 'KUBERUNTIME_RUN_AS_NON_ROOT', message: /image will run as root \(pod: "web_shop\(u-1\)", container: app\)/ });
    assert.throws(check(nonRoot({}), { username: 'nobody' }), /non-numeric user \(nobody\)/);
    assert.doesNotThrow(check(app, { uid: 1000, username: '' }, pod({ securityContext: { runAsNonRoot: true } })));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults } from './defaults.js';
import { validatePod } from './validation.js';

/** A valid pod using most of the validated fields. */
function base(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, annotations: { 'example.com/note': 'x' } },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'busybox:1.36',
          ports: [{ name: 'http', containerPort: 8080, hostPort: 80 }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            { name: 'my.var-1', value: 'v' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'web' }],
          resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '1', memory: '64Mi' } },
          livenessProbe: { httpGet: { port: 'http' } },
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 1'] } } },
        },
      ],
      initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['true'] }],
      volumes: [
        { name: 'data', hostPath: { path: '/var/lib/web', type: 'DirectoryOrCreate' } },
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      ],
      dnsConfig: { nameservers: ['10.0.0.10'], searches: ['svc.cluster.local.'], options: [{ name: 'ndots', value: '2' }] },
      activeDeadlineSeconds: 600,
      hostname: 'web-0',
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }, { key: 'k', value: 'v', effect: 'NoSchedule' }],
    },
  };
}

function spec(pod: Pod): PodSpec {
  return pod.spec!;
}
function web(pod: Pod): Container {
  return pod.spec!.containers[0]!;
}

function problemsOf(mutate: (pod: Pod) => void, defaulted = true): string[] {
  const pod = base();
  mutate(pod);
  return validatePod(defaulted ? applyPodDefaults(pod) : pod);
}

void describe('validatePod', () => {
  void it('accepts a valid, defaulted pod', () => {
    assert.deepEqual(validatePod(applyPodDefaults(base())), []);
  });

  void it('accepts generateName instead of a name', () => {
    assert.deepEqual(problemsOf((p) => { p.metadata = { generateName: 'web-', namespace: 'default' }; }), []);
  });

  void it('lists every problem at once, each with its field path', () => {
    const problems = problemsOf((p) => {
      p.metadata!.name = 'Web';
      web(p).name = 'Web';
      spec(p).restartPolicy = 'Sometimes';
    });
    assert.ok(problems.length >= 3, problems.join('\n'));
    assert.ok(problems.includes(`spec.containers[0].name: "Web" must be a lowercase DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. 'my-name', '123-abc')`), problems.join('\n'));
    assert.ok(problems.some((l) => l.startsWith('metadata.name: "Web" must be a lowercase DNS-1123 subdomain')));
    assert.ok(problems.includes('spec.restartPolicy: "Sometimes" is not supported: must be one of Always, OnFailure, Never'));
  });

  void it('does not change its argument', () => {
    const pod = applyPodDefaults(base());
    const before = structuredClone(pod);
    validatePod(pod);
    assert.deepEqual(pod, before);
  });

  const cases: [string, (p: Pod) => void, string, RegExp][] = [
    ['a missing name', (p) => { delete p.metadata!.name; }, 'metadata.name', /is required/],
    ['a bad generateName', (p) => { p.metadata = { generateName: 'Web_', namespace: 'default' }; }, 'metadata.generateName', /DNS-1123 subdomain/],
    ['a too long name', (p) => { p.metadata!.name = 'a'.repeat(254); }, 'metadata.name', /at most 253/],
    ['a missing namespace', (p) => { delete p.metadata!.namespace; }, 'metadata.namespace', /is required/],
    ['a bad namespace', (p) => { p.metadata!.namespace = 'kube.system'; }, 'metadata.namespace', /DNS-1123 label/],
    ['a bad label key', (p) => { p.metadata!.labels = { 'a b': 'x' }; }, 'metadata.labels', /"a b" \(a label key\)/],
    ['a bad label value', (p) => { p.metadata!.labels = { app: '-x' }; }, 'metadata.labels[app]', /"-x" must be empty or/],
    ['a bad annotation key', (p) => { p.metadata!.annotations = { 'a/b/c': 'x' }; }, 'metadata.annotations', /annotation key/],
    ['annotations over 256 KiB', (p) => { p.metadata!.annotations = { a: 'x'.repeat(256 * 1024) }; }, 'metadata.annotations', /262145 bytes.*262144/],
    ['no containers', (p) => { spec(p).containers = []; }, 'spec.containers', /at least one container/],
    ['a missing container name', (p) => { delete (web(p) as Partial<Container>).name; }, 'spec.containers[0].name', /is required/],
    ['a duplicate container name', (p) => { spec(p).containers.push({ name: 'web', image: 'x' }); }, 'spec.containers[1].name', /already the name of spec.containers\[0\]/],
    ['an init container named as a container', (p) => { spec(p).initContainers![0]!.name = 'web'; }, 'spec.initContainers[0].name', /unique across containers and initContainers/],
    ['a missing image', (p) => { delete web(p).image; }, 'spec.containers[0].image', /is required/],
    ['an image with spaces', (p) => { web(p).image = ' busybox'; }, 'spec.containers[0].image', /whitespace/],
    ['a bad pull policy', (p) => { web(p).imagePullPolicy = 'Sometimes'; }, 'spec.containers[0].imagePullPolicy', /Always, IfNotPresent, Never/],
    ['a bad termination message policy', (p) => { web(p).terminationMessagePolicy = 'X'; }, 'spec.containers[0].terminationMessagePolicy', /File, FallbackToLogsOnError/],
    ['a container port 0', (p) => { web(p).ports![0]!.containerPort = 0; }, 'spec.containers[0].ports[0].containerPort', /is required/],
    ['a container port 70000', (p) => { web(p).ports![0]!.containerPort = 70000; }, 'spec.containers[0].ports[0].containerPort', /1 to 65535/],
    ['a negative host port', (p) => { web(p).ports![0]!.hostPort = -1; }, 'spec.containers[0].ports[0].hostPort', /0 to 65535/],
    ['a bad protocol', (p) => { web(p).ports![0]!.protocol = 'HTTP'; }, 'spec.containers[0].ports[0].protocol', /TCP, UDP, SCTP/],
    ['a long port name', (p) => { web(p).ports![0]!.name = 'a-very-long-port-name'; }, 'spec.containers[0].ports[0].name', /at most 15/],
    ['a port name without a letter', (p) => { web(p).ports![0]!.name = '8080'; }, 'spec.containers[0].ports[0].name', /at least one letter/],
    ['a port name with "--"', (p) => { web(p).ports![0]!.name = 'a--b'; }, 'spec.containers[0].ports[0].name', /two '-'/],
    ['an uppercase port name', (p) => { web(p).ports![0]!.name = 'HTTP'; }, 'spec.containers[0].ports[0].name', /lowercase/],
    ['a duplicate port name', (p) => { web(p).ports!.push({ name: 'http', containerPort: 81 }); }, 'spec.containers[0].ports[1].name', /unique in a container/],
    ['a bad host IP', (p) => { web(p).ports![0]!.hostIP = '1.2.3'; }, 'spec.containers[0].ports[0].hostIP', /IPv4 or IPv6/],
    ['a host port taken twice', (p) => { spec(p).containers.push({ name: 'b', image: 'x', ports: [{ containerPort: 9, hostPort: 80 }] }); }, 'spec.containers[1].ports[0].hostPort', /already taken by spec.containers\[0\].ports\[0\].hostPort/],
    ['a host port unequal to the container port with the host network', (p) => { spec(p).hostNetwork = true; }, 'spec.containers[0].ports[0].hostPort', /must equal containerPort/],
    ['an empty env name', (p) => { web(p).env![2]!.name = ''; }, 'spec.containers[0].env[2].name', /is required/],
    ['an env name starting with a digit', (p) => { web(p).env![2]!.name = '1X'; }, 'spec.containers[0].env[2].name', /not start with a digit/],
    ['an env name with "="', (p) => { web(p).env![2]!.name = 'A=B'; }, 'spec.containers[0].env[2].name', /letters, digits/],
    ['value and valueFrom', (p) => { web(p).env![0]!.value = 'x'; }, 'spec.containers[0].env[0].valueFrom', /non-empty value/],
    ['two valueFrom sources', (p) => { web(p).env![0]!.valueFrom!.secretKeyRef = { name: 's', key: 'k' }; }, 'spec.containers[0].env[0].valueFrom', /exactly one.*found fieldRef, secretKeyRef/],
    ['a fieldRef to an unsupported field', (p) => { web(p).env![0]!.valueFrom!.fieldRef!.fieldPath = 'spec.hostname'; }, 'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath', /"spec.hostname" is not supported/],
    ['a fieldRef to all labels', (p) => { web(p).env![0]!.valueFrom!.fieldRef!.fieldPath = 'metadata.labels'; }, 'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath', /not supported/],
    ['a fieldRef with a bad label key', (p) => { web(p).env![1]!.valueFrom!.fieldRef!.fieldPath = "metadata.labels['a b']"; }, 'spec.containers[0].env[1].valueFrom.fieldRef.fieldPath', /has a key that/],
    ['a fieldRef of version v2', (p) => { web(p).env![0]!.valueFrom!.fieldRef!.apiVersion = 'v2'; }, 'spec.containers[0].env[0].valueFrom.fieldRef.apiVersion', /only version is v1/],
    ['a resourceFieldRef to a bad resource', (p) => { web(p).env![0]!.valueFrom = { resourceFieldRef: { resource: 'limits.gpu' } }; }, 'spec.containers[0].env[0].valueFrom.resourceFieldRef.resource', /not supported/],
    ['a secretKeyRef without a key', (p) => { web(p).env![0]!.valueFrom = { secretKeyRef: { name: 's', key: '' } }; }, 'spec.containers[0].env[0].valueFrom.secretKeyRef.key', /is required/],
    ['a mount of an unknown volume', (p) => { web(p).volumeMounts![0]!.name = 'nope'; }, 'spec.containers[0].volumeMounts[0].name', /not a volume of this pod/],
    ['a relative mount path', (p) => { web(p).volumeMounts![0]!.mountPath = 'data'; }, 'spec.containers[0].volumeMounts[0].mountPath', /absolute/],
    ['a duplicate mount path', (p) => { web(p).volumeMounts!.push({ name: 'scratch', mountPath: '/data' }); }, 'spec.containers[0].volumeMounts[1].mountPath', /unique in a container/],
    ['an absolute subPath', (p) => { web(p).volumeMounts![0]!.subPath = '/x'; }, 'spec.containers[0].volumeMounts[0].subPath', /relative/],
    ['a subPath with ".."', (p) => { web(p).volumeMounts![0]!.subPath = 'a/../../b'; }, 'spec.containers[0].volumeMounts[0].subPath', /'\.\.'/],
    ['a bad mount propagation', (p) => { web(p).volumeMounts![0]!.mountPropagation = 'Shared'; }, 'spec.containers[0].volumeMounts[0].mountPropagation', /None, HostToContainer, Bidirectional/],
    ['a duplicate volume name', (p) => { spec(p).volumes![1]!.name = 'data'; }, 'spec.volumes[1].name', /unique/],
    ['a bad volume name', (p) => { spec(p).volumes![1]!.name = 'Scratch'; }, 'spec.volumes[1].name', /DNS-1123 label/],
    ['two volume sources', (p) => { spec(p).volumes![0]!.emptyDir = {}; }, 'spec.volumes[0]', /exactly one volume source \(found emptyDir, hostPath\)/],
    ['a relative hostPath', (p) => { spec(p).volumes![0]!.hostPath!.path = 'var/lib'; }, 'spec.volumes[0].hostPath.path', /absolute/],
    ['a hostPath with ".."', (p) => { spec(p).volumes![0]!.hostPath!.path = '/var/../etc'; }, 'spec.volumes[0].hostPath.path', /'\.\.'/],
    ['a bad hostPath type', (p) => { spec(p).volumes![0]!.hostPath!.type = 'Dir'; }, 'spec.volumes[0].hostPath.type', /DirectoryOrCreate, Directory, FileOrCreate/],
    ['a bad emptyDir medium', (p) => { spec(p).volumes![1]!.emptyDir!.medium = 'Disk'; }, 'spec.volumes[1].emptyDir.medium', /Memory, HugePages/],
    ['a bad emptyDir sizeLimit', (p) => { spec(p).volumes![1]!.emptyDir!.sizeLimit = '64 MB'; }, 'spec.volumes[1].emptyDir.sizeLimit', /invalid quantity/],
    ['a secret volume without a name', (p) => { spec(p).volumes!.push({ name: 's', secret: {} }); }, 'spec.volumes[2].secret.secretName', /is required/],
    ['a file mode over 0777', (p) => { spec(p).volumes!.push({ name: 's', configMap: { name: 'c', defaultMode: 0o1777 } }); }, 'spec.volumes[2].configMap.defaultMode', /0777/],
    ['a csi volume without a driver', (p) => { spec(p).volumes!.push({ name: 'c', csi: { driver: '' } }); }, 'spec.volumes[2].csi.driver', /is required/],
    ['a csi volume with a bad driver name', (p) => { spec(p).volumes!.push({ name: 'c', csi: { driver: 'Bad Driver' } }); }, 'spec.volumes[2].csi.driver', /DNS-1123 subdomain/],
    ['a csi secret without a name', (p) => { spec(p).volumes!.push({ name: 'c', csi: { driver: 'd.example.com', nodePublishSecretRef: {} } }); }, 'spec.volumes[2].csi.nodePublishSecretRef.name', /is required/],
    ['a flexVolume without a driver', (p) => { spec(p).volumes!.push({ name: 'f', flexVolume: { driver: '' } }); }, 'spec.volumes[2].flexVolume.driver', /is required/],
    ['a flexVolume option in orch.io', (p) => { spec(p).volumes!.push({ name: 'f', flexVolume: { driver: 'v~d', options: { 'orch.io/fsType': 'ext4' } } }); }, 'spec.volumes[2].flexVolume.options[orch.io/fsType]', /reserved/],
    ['an ephemeral volume without a template', (p) => { spec(p).volumes!.push({ name: 'e', ephemeral: {} }); }, 'spec.volumes[2].ephemeral.volumeClaimTemplate', /is required/],
    ['an ephemeral template without access modes', (p) => { spec(p).volumes!.push({ name: 'e', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1Gi' } } } } } }); }, 'spec.volumes[2].ephemeral.volumeClaimTemplate.spec.accessModes', /is required: at least 1 access mode/],
    ['an ephemeral template without storage', (p) => { spec(p).volumes!.push({ name: 'e', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } }); }, 'spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources[storage]', /is required/],
    ['an ephemeral template with a name', (p) => { spec(p).volumes!.push({ name: 'e', ephemeral: { volumeClaimTemplate: { metadata: { name: 'x' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }); }, 'spec.volumes[2].ephemeral.volumeClaimTemplate.metadata.name', /cannot be set/],
    ['a claim volume without a claim name', (p) => { spec(p).volumes!.push({ name: 'c', persistentVolumeClaim: { claimName: '' } }); }, 'spec.volumes[2].persistentVolumeClaim.claimName', /is required/],
    ['a bad restart policy', (p) => { spec(p).restartPolicy = 'Sometimes'; }, 'spec.restartPolicy', /Always, OnFailure, Never/],
    ['a bad DNS policy', (p) => { spec(p).dnsPolicy = 'Cluster'; }, 'spec.dnsPolicy', /ClusterFirst, ClusterFirstWithHostNet, Default, None/],
    ['DNS policy None without nameservers', (p) => { spec(p).dnsPolicy = 'None'; delete spec(p).dnsConfig; }, 'spec.dnsConfig.nameservers', /at least one nameserver/],
    ['four nameservers', (p) => { spec(p).dnsConfig!.nameservers = ['1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4']; }, 'spec.dnsConfig.nameservers', /more than the 3/],
    ['a nameserver that is not an IP', (p) => { spec(p).dnsConfig!.nameservers = ['dns.local']; }, 'spec.dnsConfig.nameservers[0]', /IPv4 or IPv6/],
    ['33 search domains', (p) => { spec(p).dnsConfig!.searches = Array.from({ length: 33 }, (_, i) => `d${i}.local`); }, 'spec.dnsConfig.searches', /more than the 32/],
    ['a bad search domain', (p) => { spec(p).dnsConfig!.searches = ['a_b']; }, 'spec.dnsConfig.searches[0]', /DNS-1123 subdomain/],
    ['a DNS option without a name', (p) => { spec(p).dnsConfig!.options = [{ value: '1' }]; }, 'spec.dnsConfig.options[0].name', /is required/],
    ['a negative grace period', (p) => { spec(p).terminationGracePeriodSeconds = -1; }, 'spec.terminationGracePeriodSeconds', /negative/],
    ['an active deadline of 0', (p) => { spec(p).activeDeadlineSeconds = 0; }, 'spec.activeDeadlineSeconds', /1 to 2147483647/],
    ['a bad hostname', (p) => { spec(p).hostname = 'web.0'; }, 'spec.hostname', /DNS-1123 label/],
    ['a bad subdomain', (p) => { spec(p).subdomain = 'Sub'; }, 'spec.subdomain', /DNS-1123 label/],
    ['a bad node name', (p) => { spec(p).nodeName = 'Node_1'; }, 'spec.nodeName', /DNS-1123 subdomain/],
    ['a bad node selector value', (p) => { spec(p).nodeSelector = { disk: 'a b' }; }, 'spec.nodeSelector[disk]', /must be empty or/],
    ['a toleration with a value and Exists', (p) => { spec(p).tolerations = [{ key: 'k', operator: 'Exists', value: 'v' }]; }, 'spec.tolerations[0].value', /must be empty/],
    ['a toleration without key and operator Equal', (p) => { spec(p).tolerations = [{ value: 'v' }]; }, 'spec.tolerations[0].operator', /must be Exists when key is empty/],
    ['a toleration with a bad effect', (p) => { spec(p).tolerations = [{ operator: 'Exists', effect: 'NoRun' }]; }, 'spec.tolerations[0].effect', /NoSchedule, PreferNoSchedule, NoExecute/],
    ['tolerationSeconds without NoExecute', (p) => { spec(p).tolerations = [{ operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }]; }, 'spec.tolerations[0].tolerationSeconds', /NoExecute/],
    ['a malformed quantity', (p) => { web(p).resources!.limits!.cpu = 'one'; }, 'spec.containers[0].resources.limits[cpu]', /invalid quantity "one"/],
    ['a negative quantity', (p) => { web(p).resources!.requests!.memory = '-1Mi'; }, 'spec.containers[0].resources.requests[memory]', /negative/],
    ['requests above limits', (p) => { web(p).resources!.requests!.cpu = '2'; }, 'spec.containers[0].resources.requests[cpu]', /2 must be less than or equal to the limit \(1\)/],
    ['an unknown resource name', (p) => { web(p).resources!.limits!.gpu = '1'; }, 'spec.containers[0].resources.limits[gpu]', /not a container resource/],
    ['a fractional extended resource', (p) => { web(p).resources!.limits!['example.com/gpu'] = '500m'; }, 'spec.containers[0].resources.limits[example.com/gpu]', /whole number/],
    ['an extended request unequal to its limit', (p) => { web(p).resources = { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '1' } }; }, 'spec.containers[0].resources.requests[example.com/gpu]', /must equal the limit/],
    ['a probe without a handler', (p) => { web(p).livenessProbe = { periodSeconds: 5 }; }, 'spec.containers[0].livenessProbe', /exactly one handler.*found none/],
    ['a probe with two handlers', (p) => { web(p).livenessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 80 } }; }, 'spec.containers[0].livenessProbe', /found exec, tcpSocket/],
    ['a liveness probe with successThreshold 2', (p) => { web(p).livenessProbe!.successThreshold = 2; }, 'spec.containers[0].livenessProbe.successThreshold', /must be 1/],
    ['a probe with a negative delay', (p) => { web(p).livenessProbe!.initialDelaySeconds = -1; }, 'spec.containers[0].livenessProbe.initialDelaySeconds', /negative/],
    ['a probe with a bad port', (p) => { web(p).livenessProbe = { tcpSocket: { port: 0 } }; }, 'spec.containers[0].livenessProbe.tcpSocket.port', /1 to 65535/],
    ['a probe with a bad scheme', (p) => { web(p).livenessProbe!.httpGet!.scheme = 'FTP'; }, 'spec.containers[0].livenessProbe.httpGet.scheme', /HTTP, HTTPS/],
    ['an exec probe without a command', (p) => { web(p).readinessProbe = { exec: {} }; }, 'spec.containers[0].readinessProbe.exec.command', /is required/],
    ['a readiness probe with a grace period', (p) => { web(p).readinessProbe = { exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 }; }, 'spec.containers[0].readinessProbe.terminationGracePeriodSeconds', /must not be set/],
    ['a lifecycle handler with none', (p) => { web(p).lifecycle = { postStart: {} }; }, 'spec.containers[0].lifecycle.postStart', /exactly one handler/],
    ['a probe on an init container', (p) => { spec(p).initContainers![0]!.livenessProbe = { exec: { command: ['true'] } }; }, 'spec.initContainers[0].livenessProbe', /must not be set for an init container/],
    ['a restart policy on a regular container', (p) => { web(p).restartPolicy = 'Always'; }, 'spec.containers[0].restartPolicy', /regular container/],
    ['an init container restart policy Never', (p) => { spec(p).initContainers![0]!.restartPolicy = 'Never'; }, 'spec.initContainers[0].restartPolicy', /may only set Always/],
    ['ephemeral containers at creation', (p) => { spec(p).ephemeralContainers = [{ name: 'debug', image: 'x' }]; }, 'spec.ephemeralContainers', /must be empty/],
  ];
  for (const [what, mutate, path, pattern] of cases) {
    void it(`rejects ${what}`, () => {
      const problems = problemsOf(mutate);
      const hit = problems.find((line) => line.startsWith(`${path}: `) && pattern.test(line));
      assert.ok(hit !== undefined, `expected a problem at ${path} matching ${String(pattern)}, got:\n${problems.join('\n')}`);
    });
  }

  void it('accepts the sources of storage drivers and claims', () => {
    const problems = problemsOf((p) => {
      spec(p).volumes!.push(
        { name: 'claim', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        { name: 'inline', csi: { driver: 'hostpath.csi.orch.io', volumeAttributes: { size: '1Gi' }, nodePublishSecretRef: { name: 'creds' } } },
        { name: 'flex', flexVolume: { driver: 'example~lvm', fsType: 'ext4', options: { size: '1G' } } },
        { name: 'scratch2', ephemeral: { volumeClaimTemplate: { metadata: { labels: { app: 'web' } }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } } } } },
      );
    });
    assert.deepEqual(problems, []);
  });

  void it('accepts a sidecar init container with a probe', () => {
    const problems = problemsOf((p) => {
      spec(p).initContainers = [{ name: 'side', image: 'x', restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } }];
    });
    assert.deepEqual(problems, []);
  });

  void it('accepts annotations fields whose keys are uppercase, and all the env field paths', () => {
    const paths = ['metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs', "metadata.annotations['Example.com/Key']"];
    const problems = problemsOf((p) => {
      web(p).env = paths.map((fieldPath, i) => ({ name: `V${i}`, valueFrom: { fieldRef: { fieldPath } } }));
    });
    assert.deepEqual(problems, []);
  });

  void it('requires the policies that defaulting fills in', () => {
    const problems = problemsOf(() => undefined, false);
    for (const path of ['spec.restartPolicy', 'spec.dnsPolicy', 'spec.containers[0].imagePullPolicy', 'spec.containers[0].ports[0].protocol']) {
      assert.ok(problems.some((l) => l.startsWith(`${path}: is required`)), `${path} in ${problems.join('\n')}`);
    }
  });

  void it('reports a pod without a spec', () => {
    assert.deepEqual(validatePod({ metadata: { name: 'a', namespace: 'b' } }), ['spec: is required']);
  });
});

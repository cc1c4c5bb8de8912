/**
 * The event reasons upstream's kubelet records where this agent records them too, each provoked
 * on a real containerd in one small cluster (orch-apiserver, one agent; the events read back
 * through the API): InspectFailed, FailedCreatePodSandBox, SandboxChanged, MissingClusterDNS
 * (once per pod, the node-wide line logged once per start), DNSConfigForming (the node's
 * resolv.conf has a nameserver), ProbeWarning,
 * NetworkNotReady and FailedKillPod (the runtime's CNI configuration taken away), FailedSync
 * (the runtime stopped). Beside them, the Node's spec.podCIDR handed to the runtime. ExceededGracePeriod needs a kill that outlasts its grace period by half
 * again, which containerd does not give: src/agent/podworkers/kill-now.test.ts covers it.
 */
import assert from 'node:assert/strict';
import { rename } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/wait.js';

let cluster: Cluster;
let cri: CriClient;
let redirector: Server;

interface EventView { reason: string; message: string; involvedObject: { name: string } }

async function podEvents(pod: string): Promise<EventView[]> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${pod}`);
  return (res.body.items as EventView[] | undefined) ?? [];
}

async function waitForEvent(pod: string, reason: string, timeoutMs = 60_000): Promise<EventView> {
  return waitFor(`event ${reason} on pod ${pod}`, async () => (await podEvents(pod)).find((e) => e.reason === reason), { timeoutMs, intervalMs: 250 });
}

/** The sandboxes of an API pod (named as is, without the static pods' node suffix). */
async function sandboxesOf(c: CriClient, pod: string): Promise<{ id: string; state: string }[]> {
  return c.listPodSandbox({ labelSelector: { 'io.orch.pod.name': pod } });
}

async function createPod(name: string, spec: Record<string, unknown>, container: Record<string, unknown> = {}): Promise<void> {
  const body = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: {
      nodeName: cluster.node, terminationGracePeriodSeconds: 1, ...spec,
      containers: [{ name: 'c', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...container }],
    },
  };
  const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body });
  assert.equal(res.status, 201, res.text);
}

before(async () => {
  cluster = await startCluster();
  cri = connectCri({ runtimeEndpoint: cluster.containerd.endpoint, requestTimeoutMs: 30_000 });
  redirector = createServer((_req, res) => {
    res.writeHead(302, { location: 'http://elsewhere.invalid/' });
    res.end('moved');
  });
  redirector.listen(0, '127.0.0.1');
  await once(redirector, 'listening');
});

after(async () => {
  redirector.close();
  cri.close();
  await cluster.stop();
});

void describe('event reasons on a real runtime', () => {
  void it('InspectFailed for an image reference that cannot be parsed', async () => {
    await createPod('bad-image', { hostNetwork: true }, { image: 'Not/Valid:' });
    const e = await waitForEvent('bad-image', 'InspectFailed');
    assert.match(e.message, /^Failed to apply default image tag "Not\/Valid:": /);
  });

  void it('FailedCreatePodSandBox when the runtime cannot make the sandbox', async () => {
    await createPod('bad-sysctl', { hostNetwork: true, securityContext: { sysctls: [{ name: 'kernel.shm_rmid_forced', value: 'not-a-number' }] } });
    const e = await waitForEvent('bad-sysctl', 'FailedCreatePodSandBox');
    assert.match(e.message, /^Failed to create pod sandbox: /);
  });

  void it('MissingClusterDNS once per pod (logged once per start), SandboxChanged when the sandbox is gone, DNSConfigForming', async () => {
    await createPod('dns-a', {});
    await createPod('dns-b', {});
    const e = await waitForEvent('dns-a', 'MissingClusterDNS');
    assert.equal(e.message, `pod: "dns-a_default(${await uidOf('dns-a')})". nodeagent does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`);
    await waitForEvent('dns-b', 'MissingClusterDNS');
    const sandbox = await waitFor('dns-a running', async () => (await sandboxesOf(cri, 'dns-a')).find((s) => s.state === 'SANDBOX_READY')?.id, { timeoutMs: 60_000 });
    await cri.stopPodSandbox(sandbox);
    const changed = await waitForEvent('dns-a', 'SandboxChanged');
    assert.equal(changed.message, 'Pod sandbox changed, it will be killed and re-created.');
    await waitFor('dns-a in a new sandbox', async () => (await sandboxesOf(cri, 'dns-a')).some((s) => s.state === 'SANDBOX_READY' && s.id !== sandbox), { timeoutMs: 60_000 });
    const missing = (await podEvents('dns-a')).filter((ev) => ev.reason === 'MissingClusterDNS');
    assert.equal(missing.length, 1, 'the recreated sandbox records no second MissingClusterDNS');
    // The node-wide line (the events' own log lines quote the pod's message, `pod: "..."` first).
    assert.equal(cluster.agent.logs().match(/\] nodeagent does not have ClusterDNS IP configured/g)?.length, 1, 'one log line for the node per start');

    // The API allows 3 nameservers of the pod's own: the node's resolv.conf (dnsPolicy Default) adds at least one.
    await createPod('dns-cut', { hostNetwork: true, dnsPolicy: 'Default', dnsConfig: { nameservers: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] } });
    const cut = await waitForEvent('dns-cut', 'DNSConfigForming');
    assert.match(cut.message, /^Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: \S+ \S+ \S+$/);
  });

  void it('ProbeWarning for a probe redirected to another host', async () => {
    const { port } = redirector.address() as AddressInfo;
    await createPod('redirected', { hostNetwork: true }, { readinessProbe: { httpGet: { host: '127.0.0.1', port, path: '/' }, periodSeconds: 1 } });
    const e = await waitForEvent('redirected', 'ProbeWarning');
    assert.match(e.message, /^Readiness probe warning: Probe terminated redirects, Response body: moved/);
  });

  void it('hands the Node\'s spec.podCIDR to the runtime (not an event: the node status loop reads it)', async () => {
    const res = await cluster.server.client.request('PATCH', `/api/v1/nodes/${cluster.node}`, {
      body: { spec: { podCIDR: '10.244.7.0/24' } }, contentType: 'application/merge-patch+json',
    });
    assert.equal(res.status, 200, res.text);
    await cluster.agent.waitForLog(/Pod CIDR handed to the runtime podCIDR="10\.244\.7\.0\/24"/, 30_000);
  });

  void it('NetworkNotReady and FailedKillPod while the runtime has no CNI configuration', async () => {
    await createPod('net-before', {});
    await waitFor('net-before running', async () => (await sandboxesOf(cri, 'net-before')).some((s) => s.state === 'SANDBOX_READY'), { timeoutMs: 60_000 });
    const conf = join(cluster.containerd.dir, 'cni', '10-nodeagent.conflist');
    const aside = join(cluster.containerd.dir, '10-nodeagent.conflist.aside');
    await rename(conf, aside);
    try {
      await waitFor('the runtime network not ready', async () =>
        (await cri.status()).status?.conditions.some((c) => c.type === 'NetworkReady' && !c.status) === true, { timeoutMs: 30_000 });
      await createPod('net-after', {});
      const e = await waitForEvent('net-after', 'NetworkNotReady');
      assert.match(e.message, /^network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady/);
      const res = await cluster.server.client.request('DELETE', '/api/v1/namespaces/default/pods/net-before');
      assert.equal(res.status, 200, res.text);
      const killed = await waitForEvent('net-before', 'FailedKillPod');
      assert.match(killed.message, /^error killing pod: /);
    } finally {
      await rename(aside, conf);
    }
  });

  void it('FailedSync when the runtime cannot be read', async () => {
    await createPod('sync-me', { hostNetwork: true });
    await waitFor('sync-me running', async () => (await sandboxesOf(cri, 'sync-me')).some((s) => s.state === 'SANDBOX_READY'), { timeoutMs: 60_000 });
    await cluster.containerd.stop();
    const e = await waitForEvent('sync-me', 'FailedSync');
    assert.match(e.message, /^error determining status: /);
  });
});

async function uidOf(name: string): Promise<string> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return String((res.body.metadata as { uid?: string } | undefined)?.uid);
}

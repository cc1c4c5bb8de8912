/**
 * Graceful node shutdown end to end: a real dbus-daemon on a private socket with the test logind
 * (test/helpers/dbus.ts), and the real nodeagent in API-server mode (containerd, orch-apiserver)
 * configured with shutdownGracePeriod 12s and shutdownGracePeriodCriticalPods 4s, pointed at that
 * bus by DBUS_SYSTEM_BUS_ADDRESS. The agent raises logind's InhibitDelayMaxSec with its drop-in
 * and holds a delay lock; PrepareForShutdown(true) turns the node NotReady, refuses a new pod,
 * ends the regular pods first (one that ignores SIGTERM is killed at the end of the regular share)
 * and the critical pod after them, each Failed with reason Terminated in the API server, then
 * releases the lock; PrepareForShutdown(false) makes it take the lock again.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import dbus from 'dbus-next';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { startSystemBus, startTestLogind, type SystemBus, type TestLogind } from '../helpers/dbus.js';
import { eventsPath } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

let bus: SystemBus;
let logind: TestLogind;
let cluster: Cluster;

interface V1Event { reason?: string; note?: string; eventTime?: string; regarding?: { kind?: string; name?: string } }

async function request(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  return cluster.server.client.request(method, path, body === undefined ? {} : { body });
}

async function podOf(name: string): Promise<Pod | undefined> {
  const res = await request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? res.body : undefined;
}

async function readyCondition(): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  const node: Node = (await request('GET', `/api/v1/nodes/${cluster.node}`)).body;
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

async function createPod(name: string, priority: number, script: string): Promise<void> {
  const res = await request('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: {
      nodeName: cluster.node, priority, terminationGracePeriodSeconds: 30,
      containers: [{ name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] }],
    },
  });
  assert.equal(res.status, 201, res.text);
}

/** The Killing events of the pods, by pod name, with their times (microseconds). */
async function killingTimes(): Promise<Map<string, number>> {
  const items = ((await request('GET', eventsPath())).body.items as V1Event[] | undefined) ?? [];
  const times = new Map<string, number>();
  for (const e of items) {
    if (e.reason !== 'Killing' || e.regarding?.kind !== 'Pod' || e.eventTime === undefined) continue;
    times.set(e.regarding.name ?? '', Date.parse(e.eventTime));
  }
  return times;
}

before(async () => {
  bus = await startSystemBus();
  logind = await startTestLogind(bus, 5);
  const config = join(bus.dir, 'nodeagent.yaml');
  await writeFile(config, 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\nshutdownGracePeriod: 12s\nshutdownGracePeriodCriticalPods: 4s\n');
  cluster = await startCluster({
    agentArgs: [`--config=${config}`],
    agentEnv: { DBUS_SYSTEM_BUS_ADDRESS: bus.address, NODEAGENT_LOGIND_CONF_DIR: logind.confDir },
  });
});

after(async () => {
  await cluster.stop();
  await logind.stop();
  await bus.stop();
});

void describe('graceful node shutdown', () => {
  void it('raises InhibitDelayMaxSec to the grace period and holds a delay lock, listed by logind', async () => {
    await waitFor('the agent\'s inhibitor lock', () => logind.inhibitors().some((i) => !i.released), { timeoutMs: 30_000 });
    assert.equal(logind.delaySeconds(), 12);
    assert.match(await readFile(join(logind.confDir, '99-nodeagent.conf'), 'utf8'), /^\[Login\]\nInhibitDelayMaxSec=12$/m);
    const client = dbus.sessionBus({ busAddress: bus.address });
    try {
      const manager = (await client.getProxyObject('org.freedesktop.login1', '/org/freedesktop/login1')).getInterface('org.freedesktop.login1.Manager');
      const listInhibitors = manager.ListInhibitors;
      assert.ok(listInhibitors, 'the test logind has ListInhibitors');
      const list = (await listInhibitors.call(manager)) as unknown[][];
      assert.deepEqual(list.map((i) => i.slice(0, 4)), [['shutdown', 'nodeagent', 'nodeagent needs time to handle node shutdown', 'delay']]);
    } finally {
      client.disconnect();
    }
  });

  void it('on PrepareForShutdown ends the pods in priority order within their shares, Failed/Terminated in the API server, then releases the lock', async () => {
    const stopsOnTerm = 'trap "exit 0" TERM; while true; do sleep 0.2; done';
    await createPod('regular-quick', 0, stopsOnTerm);
    await createPod('regular-stubborn', 1000, 'trap "" TERM; while true; do sleep 0.2; done');
    await createPod('critical', 2_000_001_000, stopsOnTerm);
    await waitFor('the three pods Running', async () => {
      const phases = await Promise.all(['regular-quick', 'regular-stubborn', 'critical'].map(async (n) => (await podOf(n))?.status?.phase));
      return phases.every((p) => p === 'Running');
    }, { timeoutMs: 90_000 });

    logind.prepareForShutdown(true);
    const notReady = await waitFor('the node NotReady', async () => {
      const ready = await readyCondition();
      return ready?.status === 'False' ? ready : undefined;
    }, { timeoutMs: 30_000 });
    assert.deepEqual([notReady.reason, notReady.message], ['NodeagentNotReady', 'node is shutting down']);
    const late = await request('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'late' },
      spec: { nodeName: cluster.node, containers: [{ name: 'main', image: cluster.containerd.images.busybox, command: ['sleep', '3600'] }] },
    });
    assert.equal(late.status, 201, late.text);

    for (const name of ['regular-quick', 'regular-stubborn', 'critical']) {
      const status = await waitFor(`${name} Failed`, async () => {
        const s = (await podOf(name))?.status;
        return s?.phase === 'Failed' && s.containerStatuses?.[0]?.state?.terminated !== undefined ? s : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(status.reason, 'Terminated');
      assert.equal(status.message, 'Pod was terminated in response to imminent node shutdown.');
      const disruption = status.conditions?.find((c) => c.type === 'DisruptionTarget');
      assert.deepEqual([disruption?.status, disruption?.reason], ['True', 'TerminationByNodeagent']);
    }
    const lateStatus = await waitFor('the late pod refused', async () => {
      const p = await podOf('late');
      return p?.status?.phase === 'Failed' ? p.status : undefined;
    }, { timeoutMs: 30_000 });
    assert.deepEqual([lateStatus.reason, lateStatus.message], ['NodeShutdown', 'Pod was rejected: Pod was rejected as the node is shutting down.']);

    const times = await waitFor('the Killing events of the three pods', async () => {
      const t = await killingTimes();
      return ['regular-quick', 'regular-stubborn', 'critical'].every((n) => t.has(n)) ? t : undefined;
    }, { timeoutMs: 30_000 });
    const regular = Math.max(times.get('regular-quick') ?? 0, times.get('regular-stubborn') ?? 0);
    const critical = times.get('critical') ?? 0;
    // The regular pods' share is 12s - 4s = 8s: the stubborn one holds its group until then.
    assert.ok(critical - regular >= 7_000, `the critical pod is killed after the regular share (${critical - regular} ms after the regular pods)`);
    assert.ok(critical - regular < 20_000, `the critical pod is killed once the regular share is over (${critical - regular} ms)`);
    const stubborn = await podOf('regular-stubborn');
    assert.equal(stubborn?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 137, 'killed at the end of its share');

    await waitFor('the lock released', () => logind.inhibitors().every((i) => i.released), { timeoutMs: 30_000 });
    const nodeEvents = ((await request('GET', eventsPath())).body.items as V1Event[] | undefined) ?? [];
    assert.ok(nodeEvents.some((e) => e.reason === 'NodeShutdown' && e.regarding?.kind === 'Node' && e.note === 'Shutdown manager detected shutdown event'));
  });

  void it('takes the lock again when the shutdown is cancelled, and the node is Ready again', async () => {
    logind.prepareForShutdown(false);
    await waitFor('a new inhibitor lock', () => logind.inhibitors().filter((i) => !i.released).length === 1, { timeoutMs: 30_000 });
    assert.equal(logind.inhibitors().length, 2);
    await waitFor('the node Ready again', async () => (await readyCondition())?.status === 'True', { timeoutMs: 30_000 });
  });
});

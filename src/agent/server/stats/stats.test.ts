import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cadvisorFamilies, resourceFamilies } from '../metrics/container-metrics.js';
import { renderFamilies } from '../metrics/exposition.js';
import { parseCpuinfo } from '../spec.js';
import { defaultRouteInterface, nodeMemory, parseMeminfo, parseNetDev, parseProcStat, parseVmstat } from './node.js';
import type { StatsSnapshot } from './provider.js';
import { buildSummary } from './summary.js';

void describe('node counters', () => {
  void it('parse /proc/stat, /proc/meminfo, /proc/vmstat, /proc/net/dev and /proc/net/route', () => {
    assert.equal(parseProcStat('cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 1 2 3\n'), (100 + 5 + 50 + 3 + 2 + 1) * 10_000_000);
    const mem = parseMeminfo('MemTotal:       1000 kB\nMemFree:         200 kB\nInactive(file):  100 kB\nAnonPages:        50 kB\nHugePages_Total:   0\n');
    assert.equal(mem.get('MemTotal'), 1024000);
    assert.equal(mem.get('HugePages_Total'), 0);
    const m = nodeMemory(mem, parseVmstat('pgfault 7\npgmajfault 2\n'), 't');
    assert.deepEqual(m, { time: 't', capacity: 1024000, availableBytes: 1024000 - 716800, usageBytes: 819200, workingSetBytes: 716800, rssBytes: 51200, pageFaults: 7, majorPageFaults: 2 });
    const dev = 'Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n    lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n  eth0: 1000 10 2 0 0 0 0 0 500 5 1 0 0 0 0 0\n';
    assert.deepEqual(parseNetDev(dev), [{ name: 'eth0', rxBytes: 1000, rxErrors: 2, txBytes: 500, txErrors: 1 }]);
    assert.equal(defaultRouteInterface('Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\neth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\n'), 'eth0');
    assert.deepEqual(parseCpuinfo('processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2000.5\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n'), {
      cores: 2, sockets: 1, physicalCores: 2, vendor: 'GenuineIntel', khz: 2000500,
    });
  });
});

const T = Date.parse('2024-05-01T10:00:00Z');
const snapshot: StatsSnapshot = {
  timestamp: T,
  errors: [],
  node: {
    startTime: T - 3600_000,
    cpu: { time: '2024-05-01T10:00:00Z', usageCoreNanoSeconds: 5e9, usageNanoCores: 1e8 },
    memory: { time: '2024-05-01T10:00:00Z', capacity: 4096, workingSetBytes: 1024, availableBytes: 3072 },
    fs: { time: '2024-05-01T10:00:00Z', capacityBytes: 100, availableBytes: 60, usedBytes: 40 },
    imageFs: { time: '2024-05-01T10:00:00Z', usedBytes: 7 },
    rlimit: { time: '2024-05-01T10:00:00Z', maxpid: 4194304, curproc: 300 },
  },
  pods: [{
    uid: 'u1', name: 'web', namespace: 'default', sandboxId: 's1', startTime: T - 60_000, processCount: 2,
    cpu: { time: '2024-05-01T10:00:00Z', usageCoreNanoSeconds: 2e9 }, memory: { time: '2024-05-01T10:00:00Z', workingSetBytes: 300 },
    containers: [{
      id: 'c1', name: 'main', image: 'busybox', startTime: T - 50_000,
      cpu: { time: '2024-05-01T10:00:00Z', usageCoreNanoSeconds: 1.5e9 }, memory: { time: '2024-05-01T10:00:00Z', workingSetBytes: 200 },
      rootfs: { time: '2024-05-01T10:00:00Z', usedBytes: 10 }, logs: { time: '2024-05-01T10:00:00Z', usedBytes: 5 },
    }],
    volumes: [{ name: 'data', time: '2024-05-01T10:00:00Z', usedBytes: 4096, inodesUsed: 2, capacityBytes: 100, availableBytes: 60 }],
    ephemeralStorage: { time: '2024-05-01T10:00:00Z', availableBytes: 60, capacityBytes: 100, usedBytes: 15 },
  }],
};

void describe('the summary and the container metrics', () => {
  void it('build upstream shapes from a snapshot', () => {
    const s = buildSummary(snapshot, 'node1', false);
    assert.equal(s.node.nodeName, 'node1');
    assert.deepEqual(s.node.systemContainers.map((c) => c.name), ['nodeagent', 'pods']);
    assert.equal(s.node.runtime?.imageFs?.usedBytes, 7);
    assert.equal('capacity' in (s.node.memory ?? {}), false);
    const pod = s.pods[0]!;
    assert.deepEqual(pod.podRef, { name: 'web', namespace: 'default', uid: 'u1' });
    assert.equal(pod.startTime, '2024-05-01T09:59:00Z');
    assert.deepEqual(pod['ephemeral-storage'], { time: '2024-05-01T10:00:00Z', availableBytes: 60, capacityBytes: 100, usedBytes: 15 });
    assert.deepEqual(pod.process_stats, { process_count: 2 });
    assert.deepEqual(pod.volume?.map((v) => [v.name, v.usedBytes]), [['data', 4096]]);
    assert.equal(pod.containers[0]?.logs?.usedBytes, 5);
    const small = buildSummary(snapshot, 'node1', true);
    assert.equal(small.node.fs, undefined);
    assert.equal(small.pods[0]?.containers[0]?.logs, undefined);
    assert.equal(small.pods[0]?.network, undefined);
  });

  void it('render the resource and cAdvisor metrics with labels and timestamps', () => {
    const resource = renderFamilies(resourceFamilies(snapshot));
    assert.match(resource, /^container_cpu_usage_seconds_total\{container="main",namespace="default",pod="web"\} 1\.5 1714557600000$/m);
    assert.match(resource, /^node_memory_working_set_bytes 1024 1714557600000$/m);
    assert.match(resource, /^pod_memory_working_set_bytes\{namespace="default",pod="web"\} 300 /m);
    assert.match(resource, /^scrape_error 0$/m);
    assert.match(resource, /^# TYPE node_cpu_usage_seconds_total counter$/m);
    const cadvisor = renderFamilies(cadvisorFamilies(snapshot, { cores: 2 }));
    assert.match(cadvisor, /^container_memory_working_set_bytes\{container="main",id="\/c1",image="busybox",name="c1",namespace="default",pod="web"\} 200 /m);
    assert.match(cadvisor, /^machine_cpu_cores 2$/m);
  });
});

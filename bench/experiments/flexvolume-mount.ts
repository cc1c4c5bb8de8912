/**
 * FlexVolume's cost on the node, not run by `npm run bench`: the agent's CPU per pod volume set
 * up and torn down through the volume manager with the FlexVolume plugin and the sample driver
 * (examples/flexvolume/hostdir: `init` once, then a `mount` and an `unmount` call per pod, each a
 * bind mount) next to the same pod with an emptyDir, interleaved, in this process (its CPU is the
 * agent's share: the plugin, the execFile of the driver, mountinfo reads). The driver's own CPU
 * (sh, mount, umount: the children's, from /proc/self/stat) is given beside it. Needs root (real
 * mounts). `node dist/bench/experiments/flexvolume-mount.js [--pods N]` (default 50).
 */
import { mkdir, mkdtemp, readFile, copyFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '../../src/api/clock.js';
import type { NodePod } from '../../src/api/pod/index.js';
import { createFlexDrivers, createFlexMounter, execDriver } from '../../src/agent/flexvolume/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { createVolumeManager } from '../../src/agent/volumes/index.js';
import { removeTempDir } from '../../test/helpers/tempdir.js';
import { isMain, percentile } from '../table.js';

const TICK_MS = 1000 / 100;

/** CPU (ms) of this process's waited-for children so far (cutime + cstime, clock ticks of 10 ms). */
async function childrenCpuMs(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export async function runFlexBench(pods: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-flex-'));
  try {
    const pluginDir = path.join(dir, 'exec');
    await mkdir(path.join(pluginDir, 'example.com~hostdir'), { recursive: true });
    const exe = path.join(pluginDir, 'example.com~hostdir', 'hostdir');
    await copyFile(path.resolve('examples/flexvolume/hostdir'), exe);
    await chmod(exe, 0o755);
    const sink = { write: (): boolean => true };
    const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink, clock: realClock }).logger('bench');
    const drivers = createFlexDrivers({ pluginDir, exec: execDriver, clock: realClock, logger, callTimeoutMs: 60_000 });
    await drivers.start();
    const flex = createFlexMounter({ rootDir: path.join(dir, 'root'), nodeName: 'bench', drivers, exec: execDriver, callTimeoutMs: 60_000, controllerAttachDetach: true, logger, clock: realClock });
    const manager = createVolumeManager({ rootDir: path.join(dir, 'root'), logger, clock: realClock, flex });
    const pod = (uid: string, volume: Record<string, unknown>): NodePod => ({
      metadata: { uid, name: uid, namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', ...volume }] },
    });
    const samples = { emptyDir: { up: [] as number[], down: [] as number[] }, flex: { up: [] as number[], down: [] as number[], childUp: 0, childDown: 0 } };
    for (let i = 0; i < pods; i++) {
      const e = pod(`e-${String(i)}`, { emptyDir: {} });
      let t = process.cpuUsage();
      await manager.preparePodVolumes(e);
      samples.emptyDir.up.push(cpuMs(t));
      t = process.cpuUsage();
      await manager.cleanupPodVolumes(e.metadata.uid);
      samples.emptyDir.down.push(cpuMs(t));

      const f = pod(`f-${String(i)}`, { flexVolume: { driver: 'example.com/hostdir', options: { hostDir: path.join(dir, 'host') } } });
      let c = await childrenCpuMs();
      t = process.cpuUsage();
      await manager.preparePodVolumes(f);
      samples.flex.up.push(cpuMs(t));
      samples.flex.childUp += (await childrenCpuMs()) - c;
      c = await childrenCpuMs();
      t = process.cpuUsage();
      await manager.cleanupPodVolumes(f.metadata.uid);
      samples.flex.down.push(cpuMs(t));
      samples.flex.childDown += (await childrenCpuMs()) - c;
    }
    drivers.stop();
    const p50 = (xs: number[]): string => percentile(xs, 50).toFixed(2);
    return [
      `pods: ${String(pods)} of each, interleaved; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
      `emptyDir: agent CPU p50 set up ${p50(samples.emptyDir.up)} ms, torn down ${p50(samples.emptyDir.down)} ms`,
      `flexVolume (sample driver): agent CPU p50 set up ${p50(samples.flex.up)} ms, torn down ${p50(samples.flex.down)} ms; driver processes (sh, mount, umount) mean ${(samples.flex.childUp / pods).toFixed(1)} ms per mount, ${(samples.flex.childDown / pods).toFixed(1)} ms per unmount`,
    ].join('\n');
  } finally {
    await removeTempDir(dir);
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { pods: { type: 'string', default: '50' } } });
  console.log(await runFlexBench(Number(values.pods)));
}

/**
 * The cost on the node of the volume every pod of a cluster has, not run by `npm run bench`: the
 * service account's projected volume (a token, the cluster's CA from a ConfigMap, the namespace
 * from the downward API, as the ServiceAccount admission adds it) set up and torn down through
 * the volume manager, in this process (its CPU is the agent's share), next to another build's
 * volume manager doing the same, interleaved pod by pod (order swapped every pod). For each
 * build: this process's CPU per set-up and per teardown (p50), the mount and umount processes
 * started (from the managers' -v=2 log lines: one per process), and those processes' own CPU.
 * Then the idle cost: N pods per build set up and left, and every pod synced again (the pod
 * worker's periodic `preparePodVolumes`, nothing changed) in rounds (--resyncs, default 20),
 * the builds' rounds interleaved: this process's CPU per pod sync, p50 of the rounds.
 * Needs root (real tmpfs mounts).
 *
 *   node dist/bench/experiments/token-volume.js --base-dist OTHER/dist [--pods N] [--resyncs R]
 *
 * OTHER is a built checkout (e.g. `git archive <commit> | tar -x -C OTHER`, node_modules linked,
 * `npx tsc -p tsconfig.json`); without --base-dist only this build is measured.
 */
import { readFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';

import { realClock } from '../../src/api/clock.js';
import type { NodePod } from '../../src/api/pod/index.js';
import { LogRoot, type Logger } from '../../src/agent/logging/index.js';
import { createVolumeManager, type VolumeManager, type VolumeManagerOptions } from '../../src/agent/volumes/index.js';
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

interface Side {
  readonly name: string;
  readonly manager: VolumeManager;
  readonly up: number[];
  readonly down: number[];
  /** CPU per pod sync of each resync round, ms. */
  readonly resync: number[];
  childMs: number;
  /** Log lines of mounts and unmounts (each one a mount or umount process). */
  processes: number;
}

function kubeApiAccessPod(uid: string): NodePod {
  return {
    metadata: { uid, name: uid, namespace: 'default' },
    spec: {
      serviceAccountName: 'default',
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/orch.io/serviceaccount', readOnly: true }] }],
      volumes: [{
        name: 'kube-api-access',
        projected: {
          defaultMode: 0o644,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      }],
    },
  };
}

export async function runTokenVolumeBench(pods: number, baseDist: string | undefined, resyncs = 20): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-token-'));
  const sides: Side[] = [];
  try {
    const ca: ConfigMap = { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': `-----BEGIN CERTIFICATE-----\n${'A'.repeat(1200)}\n-----END CERTIFICATE-----\n` } };
    const token = `eyJhbGciOiJSUzI1NiJ9.${'x'.repeat(900)}.${'y'.repeat(342)}`;
    const common = (name: string, count: () => void): Omit<VolumeManagerOptions, 'rootDir'> => {
      const sink = { write: (_stream: 'out' | 'err', line: string): void => { if (/"msg":"(mounted|unmounted)/.test(line)) count(); } };
      const logger: Logger = new LogRoot({ format: 'json', verbosity: 2, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink, clock: realClock }).logger(name);
      return {
        logger, clock: realClock,
        objects: { configMap: () => Promise.resolve(ca), secret: () => Promise.resolve(undefined) },
        tokens: { token: () => Promise.resolve(token), forgetPod: () => undefined },
      };
    };
    const addSide = (name: string, create: (o: VolumeManagerOptions) => VolumeManager): void => {
      const side: Side = { name, manager: undefined as unknown as VolumeManager, up: [], down: [], resync: [], childMs: 0, processes: 0 };
      (side as { manager: VolumeManager }).manager = create({ rootDir: path.join(dir, name), ...common(name, () => { side.processes++; }) });
      sides.push(side);
    };
    if (baseDist !== undefined) {
      const mod = (await import(pathToFileURL(path.resolve(baseDist, 'src/agent/volumes/index.js')).href)) as { createVolumeManager: typeof createVolumeManager };
      addSide('base', mod.createVolumeManager);
    }
    addSide('this', createVolumeManager);
    for (let i = 0; i < pods; i++) {
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const pod = kubeApiAccessPod(`${side.name}-${String(i)}`);
        let c = await childrenCpuMs();
        let t = process.cpuUsage();
        await side.manager.preparePodVolumes(pod);
        side.up.push(cpuMs(t));
        side.childMs += (await childrenCpuMs()) - c;
        c = await childrenCpuMs();
        t = process.cpuUsage();
        await side.manager.cleanupPodVolumes(pod.metadata.uid);
        side.down.push(cpuMs(t));
        side.childMs += (await childrenCpuMs()) - c;
      }
    }
    // Idle: every pod set up once, then synced again round after round, the builds in turn.
    const idlePods = new Map(sides.map((side) => [side, Array.from({ length: pods }, (_, i) => kubeApiAccessPod(`${side.name}-idle-${String(i)}`))]));
    for (const side of sides) for (const pod of idlePods.get(side) ?? []) await side.manager.preparePodVolumes(pod);
    for (let r = 0; r < resyncs; r++) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        const t = process.cpuUsage();
        for (const pod of idlePods.get(side) ?? []) await side.manager.preparePodVolumes(pod);
        side.resync.push(cpuMs(t) / pods);
      }
    }
    for (const side of sides) for (const pod of idlePods.get(side) ?? []) await side.manager.cleanupPodVolumes(pod.metadata.uid);
    const p50 = (xs: number[]): string => percentile(xs, 50).toFixed(2);
    return [
      `pods: ${String(pods)} per build, interleaved; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
      ...sides.map((s) => `${s.name === 'base' ? `base (${baseDist ?? ''})` : 'this build'}: CPU p50 set up ${p50(s.up)} ms, torn down ${p50(s.down)} ms; mount/umount processes ${String(s.processes)} (${(s.processes / pods).toFixed(2)} per pod), their CPU ${(s.childMs / pods).toFixed(1)} ms per pod; idle, ${String(pods)} pods synced again ${String(resyncs)} times: CPU per pod sync p50 ${p50(s.resync)} ms (${Math.min(...s.resync).toFixed(2)}–${Math.max(...s.resync).toFixed(2)})`),
    ].join('\n');
  } finally {
    await removeTempDir(dir);
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { pods: { type: 'string', default: '50' }, 'base-dist': { type: 'string' }, resyncs: { type: 'string', default: '20' } } });
  const pods = Number(values.pods);
  if (!(Number.isInteger(pods) && pods > 0)) throw new Error(`--pods must be a positive whole number, not ${values.pods}`);
  const resyncs = Number(values.resyncs);
  if (!(Number.isInteger(resyncs) && resyncs > 0)) throw new Error(`--resyncs must be a positive whole number, not ${values.resyncs}`);
  console.log(await runTokenVolumeBench(pods, values['base-dist'], resyncs));
}

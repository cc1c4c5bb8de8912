/**
 * The objects and waits the storage integration tests share: CSI and local PersistentVolumes,
 * claims, a busybox pod over one volume, a pod's phase and its events, and one stack of
 * orch-apiserver (controllers on), containerd, the nodeagent binary (API-server mode, a root dir
 * the test owns so that a restarted agent finds it) and the sample CSI driver.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Event, EventList, Node, Pod } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from './agent.js';
import { getObject, kubectlCreate, startApiServer, type ApiServer } from './apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from './containerd.js';
import { startCsiDriver, type CsiDriverProcess, type CsiDriverSettings } from './csi-driver.js';
import { NODE } from './pods.js';
import { removeTempDir } from './tempdir.js';
import { waitFor } from './wait.js';

export type Obj = Record<string, unknown>;
export const CSI_DRIVER = 'hostpath.csi.example.com';
const PODS = '/api/v1/namespaces/default/pods';

export const csiVolume = (name: string, handle: string, driver = CSI_DRIVER): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', csi: { driver, volumeHandle: handle } },
});

export const localVolume = (name: string, path: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: {
    capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', local: { path },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: [NODE] }] }] } },
  },
});

/** A claim pre-bound to `volumeName` (the PV controller binds it at once). */
export const claim = (name: string, volumeName: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName, resources: { requests: { storage: '1Gi' } } },
});

export const csiDriverObject = (spec: Obj, name = CSI_DRIVER): Obj => ({ apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name }, spec });

/** A busybox pod running `script` with the volume `data` (any volume source) at /data. */
export const podWith = (name: string, volume: Obj, script: string, restartPolicy = 'Always'): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: {
    restartPolicy, terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', ...volume }],
  },
});

export const claimPod = (name: string, claimName: string, script: string, restartPolicy = 'Always'): Obj =>
  podWith(name, { persistentVolumeClaim: { claimName } }, script, restartPolicy);

/** A pod of the default namespace read from the API server: the pod, a wait for its phase, its events. */
export interface PodQueries {
  readonly pod: (name: string) => Promise<Pod | undefined>;
  /** Waits for the phase; on time-out the error carries the pod's status and events. */
  readonly waitForPhase: (name: string, phase: string, timeoutMs?: number) => Promise<Pod>;
  readonly events: (name: string) => Promise<Event[]>;
  /** The first event of `reason` on the pod whose message matches `pattern`. */
  readonly waitForEvent: (name: string, reason: string, pattern: RegExp, timeoutMs?: number) => Promise<Event>;
}

/** The pod queries over a GET of the API server (`getJson` resolves undefined when not found). */
export function podQueries(getJson: <T>(path: string) => Promise<T | undefined>): PodQueries {
  const q: PodQueries = {
    pod: (name) => getJson<Pod>(`${PODS}/${name}`),
    waitForPhase: async (name, phase, timeoutMs = 90_000) => {
      try {
        return await waitFor(`pod ${name} ${phase}`, async () => {
          const p = await q.pod(name);
          return p?.status?.phase === phase ? p : undefined;
        }, { timeoutMs });
      } catch (err) {
        // What the pod went through says why: its status and events in the failure.
        const events = (await q.events(name)).map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
        throw new Error(`${(err as Error).message}; status ${JSON.stringify((await q.pod(name))?.status)}; events ${JSON.stringify(events)}`, { cause: err });
      }
    },
    events: async (name) => {
      const list = await getJson<EventList>(`/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`);
      return list?.items ?? [];
    },
    waitForEvent: (name, reason, pattern, timeoutMs = 60_000) => waitFor(`a ${reason} event on ${name} matching ${String(pattern)}`, async () =>
      (await q.events(name)).find((e) => e.reason === reason && pattern.test(e.message ?? '')), { timeoutMs }),
  };
  return q;
}

export interface StorageStack extends PodQueries {
  readonly dir: string;
  readonly rootDir: string;
  readonly server: ApiServer;
  readonly containerd: ContainerdInstance;
  agent: AgentProcess;
  driver: CsiDriverProcess;
  getJson<T>(path: string): Promise<T | undefined>;
  create(objects: Obj[]): Promise<void>;
  /** A new agent process on the same root dir and flags (after a kill). */
  restartAgent(): Promise<void>;
  /** A new sample driver process with these settings (after a kill). */
  restartDriver(settings?: Partial<CsiDriverSettings>): Promise<void>;
  stop(): Promise<void>;
}

export interface StorageStackOptions {
  /** Objects created before the driver starts (its CSIDriver). */
  readonly objects?: Obj[];
  readonly driver?: Partial<CsiDriverSettings>;
  /** The agent's environment (e.g. NODEAGENT_CSI_TIMEOUT). */
  readonly agentEnv?: Readonly<Record<string, string>>;
}

export async function startStorageStack(o: StorageStackOptions = {}): Promise<StorageStack> {
  const dir = await mkdtemp(join(tmpdir(), 'storage-'));
  const rootDir = join(dir, 'root');
  const containerd = await startContainerd();
  const server = await startApiServer({ storage: 'sqlite', controllers: true });
  const getJson = <T>(path: string): Promise<T | undefined> => getObject<T>(server, path);
  const args = [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`];
  const startAgent = (): Promise<AgentProcess> =>
    startAgentProcess({ endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir, args, ...(o.agentEnv === undefined ? {} : { env: o.agentEnv }) });
  const driverSettings: CsiDriverSettings = { name: CSI_DRIVER, nodeId: `${NODE}-id`, rootDir, dir: join(dir, 'driver'), ...o.driver };
  const agent = await startAgent();
  await waitFor('the node registered', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`)) !== undefined, { timeoutMs: 60_000 });
  if (o.objects !== undefined) await kubectlCreate(server, o.objects);
  const driver = await startCsiDriver(driverSettings);
  const stack: StorageStack = {
    dir, rootDir, server, containerd, agent, driver, getJson,
    create: (objects) => kubectlCreate(server, objects),
    ...podQueries(getJson),
    async restartAgent() {
      stack.agent = await startAgent();
    },
    async restartDriver(settings = {}) {
      stack.driver = await startCsiDriver({ ...driverSettings, ...settings });
    },
    async stop() {
      await stack.agent.stop();
      await stack.driver.kill();
      await server.stop();
      await containerd.stop();
      await removeTempDir(dir);
    },
  };
  return stack;
}

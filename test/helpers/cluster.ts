/**
 * A small real cluster for end-to-end tests of clients (kubectl, client libraries): a private
 * containerd, an orch-apiserver (SQLite) and one nodeagent registered as node `node` with a
 * client certificate from the server's CA (CN system:node:<node>, O system:nodes). The server
 * reaches the agent's secure port with its own client certificate (--nodeagent-client-*), which
 * the agent authenticates (--client-ca-file) and authorizes through the server
 * (--authorization-mode=Webhook), as upstream's API server and kubelet do.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureCa, issueClientCertificate, writeKubeconfig } from '../../src/apiserver/server/index.js';
import { startAgentProcess, type AgentProcess } from './agent.js';
import { startApiServer, type ApiServer } from './apiserver.js';
import { freePort, startContainerd, type ContainerdInstance, type StartContainerdOptions } from './containerd.js';
import { waitFor } from './wait.js';

const execFileP = promisify(execFile);

export interface Cluster {
  readonly containerd: ContainerdInstance;
  readonly server: ApiServer;
  readonly agent: AgentProcess;
  /** The node's name. */
  readonly node: string;
  /** The agent's secure port. */
  readonly agentPort: number;
  /** A scratch directory removed by stop(); the agent's root directory is `<dir>/root`. */
  readonly dir: string;
  /**
   * Stops the agent and starts it again with the same flags, from `bin` (another build's
   * bin/nodeagent; default the build it ran) on the same root directory; `agent` is then the new
   * one. Its pods keep running and are adopted, as after an agent's restart on a node.
   */
  restartAgent(bin?: string): Promise<AgentProcess>;
  /** Stops the agent, the server and containerd; removes the files. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  readonly node?: string;
  /** More orch-apiserver flags. */
  readonly serverArgs?: readonly string[];
  /** containerd's options (e.g. its root on a small tmpfs). */
  readonly containerd?: StartContainerdOptions;
  /** orch-apiserver's control loops (scheduler, node lifecycle with its taints); off by default. */
  readonly controllers?: boolean;
  /** The agent's root directory once containerd runs (default `<dir>/root`); containerd's stop unmounts what is under its own directory. */
  readonly agentRootDir?: (containerd: ContainerdInstance) => string;
  /** More nodeagent flags; a function computes them once containerd runs (e.g. thresholds from the free space of its file system). */
  readonly agentArgs?: readonly string[] | ((containerd: ContainerdInstance, rootDir: string) => Promise<readonly string[]> | readonly string[]);
  /** The agent's environment on top of this process's. */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /** Node's own flags for the agent's process (test/helpers/agent.ts: e.g. `--cpu-prof --cpu-prof-dir=DIR`). */
  readonly agentNodeArgs?: readonly string[];
  /** The agent's launcher (default this checkout's bin/nodeagent). */
  readonly agentBin?: string;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const node = options.node ?? 'node-1';
  const dir = await mkdtemp(join(tmpdir(), 'orch-cluster-'));
  const containerd = await startContainerd(options.containerd);
  let server: ApiServer | undefined;
  let agent: AgentProcess | undefined;
  const stop = async (): Promise<void> => {
    await agent?.stop();
    await server?.stop();
    await containerd.stop();
    // The agent leaves its pods' mounts (secret tmpfs) when it stops, as upstream does.
    const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
    const mounted = mountinfo.split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${dir}/`));
    for (const m of mounted.reverse()) await execFileP('umount', ['-l', m]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // The API server's client certificate toward node agents, from a CA the agents trust.
    const clientsCa = await ensureCa(join(dir, 'clients-ca'));
    const proxy = await issueClientCertificate(clientsCa, 'orch-apiserver-nodeagent-client', []);
    await writeFile(join(dir, 'proxy.crt'), proxy.certPem);
    await writeFile(join(dir, 'proxy.key'), proxy.keyPem);
    server = await startApiServer({
      storage: 'sqlite',
      ...(options.controllers === true ? { controllers: true } : {}),
      args: [`--nodeagent-client-certificate=${join(dir, 'proxy.crt')}`, `--nodeagent-client-key=${join(dir, 'proxy.key')}`, ...(options.serverArgs ?? [])],
    });
    const serverCa = await ensureCa(join(server.dir, 'pki'));
    const nodeCert = await issueClientCertificate(serverCa, `system:node:${node}`, ['system:nodes']);
    writeKubeconfig(join(dir, 'node.orchconfig'), { server: server.url, caPem: serverCa.certPem, client: nodeCert });
    const agentPort = await freePort();
    const rootDir = options.agentRootDir?.(containerd) ?? join(dir, 'root');
    const agentOptions = {
      endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
      args: [
        `--hostname-override=${node}`, '--node-ip=127.0.0.1', `--port=${agentPort}`, `--orchconfig=${join(dir, 'node.orchconfig')}`,
        `--client-ca-file=${join(dir, 'clients-ca', 'ca.crt')}`, '--anonymous-auth=false', '--authorization-mode=Webhook',
        '--node-status-update-frequency=2s',
        ...(typeof options.agentArgs === 'function' ? await options.agentArgs(containerd, rootDir) : options.agentArgs ?? []),
      ],
      ...(options.agentEnv === undefined ? {} : { env: options.agentEnv }),
      ...(options.agentNodeArgs === undefined ? {} : { nodeArgs: options.agentNodeArgs }),
    };
    agent = await startAgentProcess({ ...agentOptions, ...(options.agentBin === undefined ? {} : { bin: options.agentBin }) });
    const readyServer = server;
    await waitFor(`node ${node} Ready`, async () => {
      const res = await readyServer.client.request('GET', `/api/v1/nodes/${node}`);
      const conditions = ((res.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions) ?? [];
      return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    }, { timeoutMs: 60_000 });
    let current = agent;
    let currentBin = options.agentBin;
    const restartAgent = async (bin?: string): Promise<AgentProcess> => {
      await current.stop();
      currentBin = bin ?? currentBin;
      agent = current = await startAgentProcess({ ...agentOptions, ...(currentBin === undefined ? {} : { bin: currentBin }) });
      return current;
    };
    return { containerd, server, get agent() { return current; }, node, agentPort, dir, restartAgent, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

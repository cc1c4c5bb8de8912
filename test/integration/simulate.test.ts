/**
 * `nodeagent simulate` against orch-apiserver with its control loops: simulated nodes register
 * and become Ready, the scheduler binds a pod without nodeName to one of them and it runs there,
 * a pod scripted to exit (annotations) succeeds, and the process reports its cost at exit.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

const NODEAGENT = fileURLToPath(new URL('../../src/cmd/nodeagent.js', import.meta.url));

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
  status?: { phase?: string; containerStatuses?: { ready?: boolean }[] };
}

function pod(name: string, annotations: Record<string, string> = {}, restartPolicy = 'Always'): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', annotations },
    spec: { restartPolicy, containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
  };
}

void describe('nodeagent simulate', () => {
  let server: ApiServer | undefined;
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';
  after(async () => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
    await server?.stop();
  });

  void it('registers simulated nodes, runs a pod the scheduler binds, and reports the cost per node', async () => {
    server = await startApiServer({ storage: 'sqlite', controllers: true });
    const api = server.client;
    child = spawn(process.execPath, [NODEAGENT, 'simulate', '--nodes', '3', '--orchconfig', server.adminKubeconfig, '--node-name-prefix', 'simnode-',
      '--node-labels', 'tier=sim', '--cpu', '4', '--memory', '8Gi', '--start-delay', '200ms'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => { resolve(code); }));

    await waitFor('3 Ready simulated nodes', async () => {
      const res = await api.request('GET', '/api/v1/nodes?labelSelector=tier%3Dsim');
      const items = (res.body.items ?? []) as { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[]; capacity?: Record<string, string> } }[];
      const ready = items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      if (ready.length === 3) assert.equal(ready[0]?.status?.capacity?.cpu, '4');
      return ready.length === 3;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    assert.match(stdout, /"event":"started","nodes":3,"failed":0/);

    assert.equal((await api.request('POST', '/api/v1/namespaces/default/pods', { body: pod('web') })).status, 201);
    const running = await waitFor('the pod bound and Running on a simulated node', async () => {
      const p = (await api.request('GET', '/api/v1/namespaces/default/pods/web')).body as unknown as Pod;
      return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready === true ? p : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    assert.match(running.spec.nodeName ?? '', /^simnode-[0-2]$/);

    assert.equal((await api.request('POST', '/api/v1/namespaces/default/pods', { body: pod('job', { 'sim.orch.io/exit-after': '1s' }, 'Never') })).status, 201);
    await waitFor('the scripted pod Succeeded', async () => {
      const p = (await api.request('GET', '/api/v1/namespaces/default/pods/job')).body as unknown as Pod;
      return p.status?.phase === 'Succeeded';
    }, { timeoutMs: 60_000, intervalMs: 200 });

    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    const cost = JSON.parse(stdout.trim().split('\n').find((l) => l.includes('"event":"cost"')) ?? '{}') as { nodes?: number; rssPerNodeBytes?: number; mcpuPerNode?: number };
    assert.equal(cost.nodes, 3);
    assert.ok((cost.rssPerNodeBytes ?? 0) > 0 && (cost.mcpuPerNode ?? -1) >= 0, stdout);
  });
});

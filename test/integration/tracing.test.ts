/**
 * OpenTelemetry tracing end to end, received by an OTLP/gRPC receiver built on the official
 * OTLP proto definitions: a static pod's start is one trace from the file source's span to
 * StartContainer, the pod sync, the runtime manager's steps and the CRI calls its descendants;
 * in API-server mode the agent's requests carry the W3C trace context, so orch-apiserver's
 * request spans (and their storage spans) continue the agent's traces.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess } from '../helpers/agent.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { tempDirs } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const tempDir = tempDirs('nodeagent-tracing-');

function tracingConfig(endpoint: string): string {
  return `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\ntracing:\n  endpoint: ${endpoint}\n  samplingRatePerMillion: 1000000\n`;
}

/** The chain of span names from `span` up to its trace's root. */
function ancestry(spans: readonly ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const names = [span.name];
  for (let s = byId.get(span.parentSpanId); s !== undefined; s = byId.get(s.parentSpanId)) names.push(s.name);
  return names;
}

void describe('tracing of a static pod start', () => {
  let containerd: ContainerdInstance;
  let cri: CriClient;
  let receiver: OtlpReceiver;

  before(async () => {
    containerd = await startContainerd();
    cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    cri.close();
    await containerd.stop();
    await receiver.close();
  });

  void it('is one trace from the file source to StartContainer, the CRI calls children of the sync', async () => {
    const dir = await tempDir();
    const config = join(await tempDir(), 'config.yaml');
    // A configuration file's defaults are upstream's (webhook authn/authz): standalone needs neither.
    await writeFile(config, `${tracingConfig(receiver.endpoint)}authentication:\n  webhook:\n    enabled: false\nauthorization:\n  mode: AlwaysAllow\n`);
    await writeManifest(dir, 'traced.yaml', podManifest({ name: 'traced', image: containerd.images.busybox, hostNetwork: true, command: 'exec sleep 3600' }));
    const agent = await startAgentProcess({
      endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: dir,
      args: [`--hostname-override=${NODE}`, `--config=${config}`, `--port=${await freePort()}`],
    });
    try {
      await waitFor('the traced pod running', () => runningContainer(cri, 'traced'), { timeoutMs: 60_000 });
      const start = await waitFor('the StartContainer span', () =>
        receiver.spans().find((s) => s.name === 'runtime.v1.RuntimeService/StartContainer'), { timeoutMs: 30_000 });
      const trace = receiver.spans().filter((s) => s.traceId === start.traceId);
      const root = trace.find((s) => s.parentSpanId === '');
      assert.equal(root?.name, 'podUpdate', 'the trace begins where the file source saw the pod');
      assert.equal(root.attributes['k8s.pod.name'], `traced-${NODE}`);
      assert.equal(root.attributes['pod.source'], 'file');
      assert.equal(root.service, 'nodeagent');
      assert.deepEqual(ancestry(trace, start), ['runtime.v1.RuntimeService/StartContainer', 'startContainers', 'syncPod', 'podUpdate']);
      const sync = trace.find((s) => s.name === 'syncPod');
      assert.equal(sync?.attributes['k8s.pod.update_type'], 'create');
      for (const name of ['runtime.v1.RuntimeService/RunPodSandbox', 'runtime.v1.RuntimeService/CreateContainer']) {
        const span = trace.find((s) => s.name === name);
        assert.ok(span !== undefined, `${name} in the pod's trace`);
        assert.equal(span.kind, 'SPAN_KIND_CLIENT');
        assert.ok(ancestry(trace, span).includes('syncPod'), `${name} under the pod sync`);
      }
      const run = trace.find((s) => s.name === 'runtime.v1.RuntimeService/RunPodSandbox');
      assert.equal(run?.attributes['k8s.pod.name'], `traced-${NODE}`);
      assert.equal(run.attributes['rpc.grpc.status_code'], 0);
      assert.deepEqual(ancestry(trace, run).slice(1), ['createPodSandbox', 'syncPod', 'podUpdate']);
      // Every CRI span of the trace has its parent in the trace: no orphan, no second root.
      assert.deepEqual(trace.filter((s) => s.parentSpanId === '').map((s) => s.name), ['podUpdate']);
      const ids = new Set(trace.map((s) => s.spanId));
      for (const s of trace) if (s.parentSpanId !== '') assert.ok(ids.has(s.parentSpanId), `${s.name}'s parent is in the trace`);
    } finally {
      await agent.stop();
      for (const s of await cri.listPodSandbox()) {
        await cri.stopPodSandbox(s.id);
        await cri.removePodSandbox(s.id);
      }
    }
  });
});

void describe('tracing across the agent and orch-apiserver', () => {
  let receiver: OtlpReceiver;
  let cluster: Cluster;

  before(async () => {
    receiver = await startOtlpReceiver();
    const dir = await tempDir();
    const serverConfig = join(dir, 'apiserver-tracing.yaml');
    await writeFile(serverConfig, `apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nendpoint: ${receiver.endpoint}\nsamplingRatePerMillion: 1000000\n`);
    const agentConfig = join(dir, 'agent.yaml');
    await writeFile(agentConfig, tracingConfig(receiver.endpoint));
    cluster = await startCluster({ serverArgs: [`--tracing-config-file=${serverConfig}`], agentArgs: [`--config=${agentConfig}`] });
  });
  after(async () => {
    await cluster.stop();
    await receiver.close();
  });

  void it('continues the agent\'s request spans in the server, storage calls beneath', async () => {
    const linked = await waitFor('a server span whose parent is an agent request span', () => {
      const spans = receiver.spans();
      const clientSpans = new Map(spans.filter((s) => s.service === 'nodeagent' && s.kind === 'SPAN_KIND_CLIENT' && s.name.startsWith('HTTP ')).map((s) => [s.spanId, s]));
      return spans.find((s) => s.service === 'orch-apiserver' && s.name === 'KubernetesAPI' && clientSpans.has(s.parentSpanId)
        && spans.some((c) => c.parentSpanId === s.spanId && c.name.startsWith('storage.')));
    }, { timeoutMs: 30_000 });
    assert.equal(linked.kind, 'SPAN_KIND_SERVER');
    assert.match(String(linked.attributes['url.path']), /^\/api/);
    assert.equal(typeof linked.attributes['http.response.status_code'], 'number');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { isInvalid } from '../../api/errors.js';
import { nodeConnection, parseSimulateFlags, simulatedNodeIP } from './flags.js';
import { EXEC_EXIT_CODE_ANNOTATION, EXIT_AFTER_ANNOTATION, EXIT_CODE_ANNOTATION, SimulatedRuntime } from './runtime.js';

void describe('nodeagent simulate flags', () => {
  void it('parses its flags and passes what follows -- to the agents', () => {
    const f = parseSimulateFlags(['--nodes', '3', '--orchconfig=/x', '--node-labels', 'a=b,c=d', '--register-with-taints', 'k=v:NoSchedule,only:NoExecute',
      '--cpu', '4', '--memory', '8Gi', '--start-delay', '250ms', '--ramp', '10s', '--', '-v=2']);
    assert.equal(f.nodes, 3);
    assert.deepEqual(f.labels, { a: 'b', c: 'd' });
    assert.deepEqual(f.taints, [{ key: 'k', value: 'v', effect: 'NoSchedule' }, { key: 'only', value: '', effect: 'NoExecute' }]);
    assert.equal(f.capacity.cores, 4);
    assert.equal(f.capacity.memoryBytes, 8n * 1024n ** 3n);
    assert.equal(f.startDelayMs, 250);
    assert.equal(f.rampMs, 10_000);
    assert.deepEqual(f.agentArgs, ['-v=2']);
  });

  void it('refuses what it does not know', () => {
    assert.throws(() => parseSimulateFlags(['--orchconfig', '/x']), isInvalid);
    assert.throws(() => parseSimulateFlags(['--nodes', '1', '--orchconfig', '/x', '--bogus', '1']), isInvalid);
    assert.throws(() => parseSimulateFlags(['--nodes', '1', '--orchconfig', '/x', '--register-with-taints', 'k:Sometimes']), isInvalid);
  });

  void it('gives each node a user of its own with --token-per-node', () => {
    assert.equal(parseSimulateFlags(['--nodes', '1', '--orchconfig', '/x']).tokenPerNode, false);
    assert.equal(parseSimulateFlags(['--nodes', '1', '--orchconfig', '/x', '--token-per-node', 'true']).tokenPerNode, true);
    assert.throws(() => parseSimulateFlags(['--nodes', '1', '--orchconfig', '/x', '--token-per-node', 'yes']), /--token-per-node: "yes" is not true or false/);
    const shared = { server: 'https://127.0.0.1:6443', token: 'sims', insecureSkipTLSVerify: false };
    assert.equal(nodeConnection(shared, 'n-7', false), shared);
    assert.deepEqual(nodeConnection(shared, 'n-7', true), { ...shared, token: 'sims.n-7' });
    assert.throws(() => nodeConnection({ server: 'https://127.0.0.1:6443', insecureSkipTLSVerify: false }, 'n-7', true), /needs an orchconfig whose user has a bearer token/);
  });

  void it('gives each node its own address', () => {
    assert.equal(simulatedNodeIP(0), '10.128.0.1');
    assert.notEqual(simulatedNodeIP(255), simulatedNodeIP(256));
  });
});

void describe('simulated runtime', () => {
  const sandbox = (annotations: Record<string, string>) => ({
    config: { metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 }, annotations, labels: {} },
    runtimeHandler: '',
  });

  async function runningContainer(runtime: SimulatedRuntime, annotations: Record<string, string>, clock: FakeClock): Promise<string> {
    const sandboxId = await runtime.runPodSandbox(sandbox(annotations));
    await runtime.pullImage({ image: { image: 'registry.example/anything:1' } });
    const id = await runtime.createContainer({
      podSandboxId: sandboxId, config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'registry.example/anything:1' } }, sandboxConfig: sandbox(annotations).config,
    });
    const started = runtime.startContainer(id);
    await clock.advance(1000);
    await started;
    return id;
  }

  void it('takes the start delay, pulls any image, and exits as the pod\'s annotations script it', async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock, startDelayMs: 1000 });
    const id = await runningContainer(runtime, { [EXIT_AFTER_ANNOTATION]: '30s', [EXIT_CODE_ANNOTATION]: '3' }, clock);
    assert.equal(runtime.containers.get(id)?.state, 'CONTAINER_RUNNING');
    await clock.advance(29_000);
    assert.equal(runtime.containers.get(id)?.state, 'CONTAINER_RUNNING');
    await clock.advance(1_000);
    assert.equal(runtime.containers.get(id)?.state, 'CONTAINER_EXITED');
    assert.equal(runtime.containers.get(id)?.exitCode, 3);
    assert.equal(runtime.calls.length, 0, 'a simulated node keeps no record of calls');
  });

  void it('answers exec probes with the scripted exit code', async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock, startDelayMs: 1000 });
    const id = await runningContainer(runtime, { [EXEC_EXIT_CODE_ANNOTATION]: '1' }, clock);
    const result = await runtime.execSync({ containerId: id, cmd: ['true'], timeout: '1' } as never);
    assert.equal(result.exitCode, 1);
  });
});

/**
 * The CRI behaviour suite (src/agent/runtime/cri/behaviour.ts) against a real containerd and a
 * local docker-registry: what the FakeRuntime of the unit tests must match. One containerd
 * serves every case; each case removes the pods it made.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before } from 'node:test';
import { messageOf } from '../../src/api/errors.js';
import type { CriClient } from '../../src/agent/runtime/cri/index.js';
import { runCriBehaviour, type CriHarness } from '../../src/agent/runtime/cri/testing.js';
import { Cleanups, startRuntimeWithRegistry, type ContainerdInstance, type RegistryInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';

const cleanups = new Cleanups();
let registry: RegistryInstance;
let ctrd: ContainerdInstance;
let cri: CriClient;

before(async () => {
  ({ registry, ctrd, cri } = await startRuntimeWithRegistry(cleanups));
  await cri.pullImage({ image: { image: registry.images.busybox } });
});

after(() => cleanups.run());

/**
 * Runs until told to exit: `exit` writes the code to /tmp/exit-code and signals PID 1, whose
 * trap exits with it. PID 1 has no SIGTERM handler, so SIGTERM does nothing (as the suite wants).
 */
const COMMAND = ['sh', '-c', "trap 'exit $(cat /tmp/exit-code)' USR1; while true; do sleep 3600 & wait $!; done"];

async function removeAllPods(): Promise<void> {
  for (const pod of await cri.listPodSandbox()) {
    await cri.stopPodSandbox(pod.id);
    await cri.removePodSandbox(pod.id);
  }
}

runCriBehaviour('containerd', () => {
  const harness: CriHarness = {
    runtime: cri,
    image: registry.images.busybox,
    pullable: registry.images.busybox,
    absent: `${registry.host}/library/absent:1`,
    command: COMMAND,
    sandboxConfig: ({ name, network, labels, annotations }) => {
      const uid = randomUUID();
      return {
        metadata: { name, uid, namespace: 'cri-behaviour', attempt: 0 },
        hostname: network === 'NODE' ? '' : name,
        logDirectory: path.join(ctrd.logDir, uid),
        labels,
        annotations,
        linux: {
          cgroupParent: `${ctrd.cgroupRoot}/pod${uid}`,
          securityContext: { namespaceOptions: { network, pid: 'CONTAINER', ipc: 'POD' } },
        },
      };
    },
    exit: async (containerId, code) => {
      // The exec's own process may die with the container's PID 1: its answer does not count,
      // the container's state does.
      let execError = '';
      await cri.execSync({ containerId, cmd: ['sh', '-c', `echo ${code} > /tmp/exit-code && kill -USR1 1`], timeout: 10 }).catch((err: unknown) => {
        execError = messageOf(err);
      });
      await waitFor(`container ${containerId} to exit${execError === '' ? '' : ` (the exec failed: ${execError})`}`, async () => {
        const { status } = await cri.containerStatus({ containerId });
        return status?.state === 'CONTAINER_EXITED';
      });
    },
    cleanup: removeAllPods,
  };
  return Promise.resolve(harness);
});

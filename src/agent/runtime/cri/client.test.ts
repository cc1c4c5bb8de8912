import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Server, ServerCredentials, status, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { isOrchError, type OrchError } from '../../../api/errors.js';
import { CriClient, connectCri } from './client.js';
import { criMethods } from './proto.js';
import type { RunPodSandboxRequest } from './types-pod.js';
import { waitFor } from '../../../../test/helpers/wait.js';

function service(name: 'RuntimeService' | 'ImageService'): ServiceDefinition {
  return Object.fromEntries(criMethods(name));
}

function codeOf(err: unknown): string {
  return isOrchError(err) ? err.code : `not an OrchError: ${String(err)}`;
}

/** A fake runtime: Version never answers (until cancelled), PullImage answers after 200 ms. */
void describe('CriClient against a fake runtime', () => {
  let dir = '';
  let server: Server | undefined;
  let endpoint = '';
  let cancelledVersions = 0;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cri-client-'));
    endpoint = `unix://${path.join(dir, 'fake.sock')}`;
    const runtime: UntypedServiceImplementation = {
      Version: (call: { on(event: 'cancelled', fn: () => void): void }) => {
        call.on('cancelled', () => {
          cancelledVersions++;
        });
      },
      Status: (_call: unknown, callback: (err: { code: number; details: string } | null, value?: object) => void) => {
        callback({ code: status.NOT_FOUND, details: 'nothing here' });
      },
    };
    const image: UntypedServiceImplementation = {
      PullImage: (_call: unknown, callback: (err: null, value: object) => void) => {
        setTimeout(() => {
          callback(null, { imageRef: 'sha256:feed' });
        }, 200);
      },
    };
    const s = new Server();
    s.addService(service('RuntimeService'), runtime);
    s.addService(service('ImageService'), image);
    await new Promise<void>((resolve, reject) => {
      s.bindAsync(endpoint, ServerCredentials.createInsecure(), (err) => {
        if (err === null) resolve();
        else reject(err);
      });
    });
    server = s;
  });

  after(async () => {
    server?.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  void it('cancels a call at the request deadline with CRI_TIMEOUT naming the method', async () => {
    const client = connectCri({ runtimeEndpoint: endpoint, requestTimeoutMs: 150 });
    const started = Date.now();
    await assert.rejects(client.version('v1'), (err: OrchError) => {
      assert.equal(err.code, 'CRI_TIMEOUT');
      assert.equal(err.category, 'timeout');
      assert.match(err.message, /Version.*150 ms/);
      return true;
    });
    assert.ok(Date.now() - started < 2_000);
    client.close();
  });

  void it('gives PullImage no deadline', async () => {
    const client = connectCri({ runtimeEndpoint: endpoint, requestTimeoutMs: 50 });
    assert.equal(await client.pullImage({ image: { image: 'busybox:1.35' } }), 'sha256:feed');
    client.close();
  });

  void it('maps NOT_FOUND and cancels on abort', async () => {
    const client = connectCri({ runtimeEndpoint: endpoint });
    await assert.rejects(client.status(), (err: unknown) => codeOf(err) === 'CRI_NOT_FOUND');
    const controller = new AbortController();
    const pending = client.version('v1', { signal: controller.signal });
    setTimeout(() => {
      controller.abort();
    }, 50);
    await assert.rejects(pending, (err: unknown) => codeOf(err) === 'CRI_CANCELLED');
    const aborted = AbortSignal.abort();
    await assert.rejects(client.version('v1', { signal: aborted }), (err: unknown) => codeOf(err) === 'CRI_CANCELLED');
    client.close();
  });

  void it('rejects a request the proto cannot encode with CRI_ERROR', async () => {
    const client = connectCri({ runtimeEndpoint: endpoint });
    const bad = { config: 'not a message' } as unknown as RunPodSandboxRequest;
    await assert.rejects(client.runPodSandbox(bad), (err: unknown) => codeOf(err) === 'CRI_ERROR');
    client.close();
  });

  void it('saw the server side of the cancelled calls', async () => {
    // The server learns of a cancellation when the client's reset reaches it, a little after the
    // client gave up: on a loaded machine, after the tests above have ended.
    await waitFor('a cancelled Version call on the server', () => cancelledVersions >= 1);
  });
});

void describe('CriClient without a runtime', () => {
  void it('rejects every call with CRI_UNAVAILABLE and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const client = new CriClient({ runtimeEndpoint: '/nonexistent/nodeagent/cri.sock', requestTimeoutMs: 5_000 });
    const results = await Promise.allSettled([
      client.version('v1'),
      client.listPodSandbox(),
      client.listImages(),
      client.execSync({ containerId: 'x', cmd: ['true'] }),
    ]);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.equal(codeOf(r.reason), 'CRI_UNAVAILABLE');
      assert.match((r.reason as Error).message, /unix:\/\/\/nonexistent|\/nonexistent\/nodeagent\/cri\.sock/);
    }
    client.close();
    await assert.rejects(client.version('v1'), (err: unknown) => codeOf(err) === 'CRI_CLOSED');
    client.close();
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  void it('rejects invalid endpoints and timeouts at construction', () => {
    assert.throws(() => connectCri({ runtimeEndpoint: 'tcp://127.0.0.1:1' }), /--container-runtime-endpoint/);
    assert.throws(
      () => connectCri({ runtimeEndpoint: '/x.sock', imageEndpoint: 'npipe:////./pipe/x' }),
      /--image-service-endpoint/,
    );
    assert.throws(() => connectCri({ runtimeEndpoint: '/x.sock', requestTimeoutMs: 0 }), /runtimeRequestTimeout/);
  });
});

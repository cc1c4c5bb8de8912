import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { createUserNamespaceAdmission, USER_NAMESPACES_UNSUPPORTED } from './userns.js';

const pod = (hostUsers?: boolean): Pod => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }], ...(hostUsers === undefined ? {} : { hostUsers }) } });

void describe('hostUsers: false at admission', () => {
  void it('admits pods that keep the host\'s user namespace without asking the runtime', async () => {
    let asked = 0;
    const admit = createUserNamespaceAdmission({ gate: true, runtime: { version: () => { asked++; return Promise.resolve({ runtimeName: 'containerd', runtimeVersion: '1.6.20' }); } } });
    assert.deepEqual(await admit(pod()), { admit: true });
    assert.deepEqual(await admit(pod(true)), { admit: true });
    assert.equal(asked, 0);
  });

  void it('refuses with the gate off, naming the gate', async () => {
    const admit = createUserNamespaceAdmission({ gate: false, runtime: { version: () => Promise.reject(new Error('not asked')) } });
    assert.deepEqual(await admit(pod(false)), {
      admit: false, reason: USER_NAMESPACES_UNSUPPORTED,
      message: 'pod asks for its own user namespace (spec.hostUsers: false), but the feature gate UserNamespacesStatelessPodsSupport is off on this node',
    });
  });

  void it('refuses with the gate on, naming the runtime and its version', async () => {
    const on = (name: string, version: string) => createUserNamespaceAdmission({ gate: true, runtime: { version: () => Promise.resolve({ runtimeName: name, runtimeVersion: version }) } });
    const old = await on('containerd', '1.6.20~ds1')(pod(false));
    assert.ok(!old.admit && old.message.includes('the container runtime containerd 1.6.20~ds1 cannot create one: containerd before 1.7 ignores'), JSON.stringify(old));
    const newer = await on('containerd', 'v1.7.2')(pod(false));
    assert.ok(!newer.admit && newer.message.includes('allocates no user namespace ID mappings for the container runtime containerd v1.7.2'), JSON.stringify(newer));
    const down = await createUserNamespaceAdmission({ gate: true, runtime: { version: () => Promise.reject(new Error('connection refused')) } })(pod(false));
    assert.ok(!down.admit && down.message.endsWith('cannot be read to decide whether it can create one: connection refused'), JSON.stringify(down));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { connectLogind } from './logind.js';

void describe('connectLogind', () => {
  void it('fails with NODE_SHUTDOWN_LOGIND_UNAVAILABLE naming logind and the bus when there is no system bus', async () => {
    const err: unknown = await connectLogind({ address: 'unix:path=/nonexistent/nodeagent-test/system_bus_socket', clock: new FakeClock() }).then(() => undefined, (e: unknown) => e);
    assert.ok(isOrchError(err), String(err));
    assert.equal(err.code, 'NODE_SHUTDOWN_LOGIND_UNAVAILABLE');
    assert.match(err.message, /^systemd-logind \(org\.freedesktop\.login1 on the system D-Bus at unix:path=\/nonexistent\/nodeagent-test\/system_bus_socket\) cannot be reached: .*ENOENT/);
  });
});

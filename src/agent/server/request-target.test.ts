import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startTestServers, type TestServers } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';

/** Targets that are paths to a server but not URLs when resolved against a base. */
const ODD_TARGETS = ['//', '///', '//:', '//@', '//:99999/pods', '//x/healthz', '//healthz'];

void describe('request targets starting with //', () => {
  let open: TestServers;
  let closed: TestServers;
  before(async () => {
    open = await startTestServers();
    closed = await startTestServers((c) => { c.authentication.anonymous.enabled = false; });
  });
  after(async () => {
    await open.close();
    await closed.close();
  });

  void it('are a 404 on every port (after authentication on the secure one), with no error line', async () => {
    for (const path of ODD_TARGETS) {
      assert.equal((await rawRequest(open.ports.secure, path, { tls: true })).status, 404, `secure ${path}`);
      assert.equal((await rawRequest(open.ports.readOnly, path)).status, 404, `read-only ${path}`);
      assert.equal((await rawRequest(open.ports.healthz, path)).status, 404, `healthz ${path}`);
      assert.equal((await rawRequest(closed.ports.secure, path, { tls: true })).status, 401, `secure without credentials ${path}`);
    }
    assert.deepEqual(open.logger.at('error'), []);
    assert.deepEqual(closed.logger.at('error'), []);
    assert.equal((await rawRequest(open.ports.healthz, '/healthz')).body, 'ok');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startTestApiServer, TEST_TOKEN, type TestApiServer } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';

void describe('orch-apiserver: request targets starting with //', () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer();
  });
  after(async () => {
    await api.close();
  });

  void it('are a 401 without credentials and a 404 (405 for a POST) with them, and log nothing', async () => {
    for (const path of ['//', '///', '//:', '//@', '//:99999/pods', '//x?dryRun=All']) {
      assert.equal((await rawRequest(api.port, path)).status, 401, `anonymous ${path}`);
      const answer = await rawRequest(api.port, path, { token: TEST_TOKEN });
      assert.equal(answer.status, 404, `${path}: ${answer.body}`);
      assert.ok([404, 405].includes((await rawRequest(api.port, path, { token: TEST_TOKEN, method: 'POST', body: '{}' })).status), `POST ${path}`);
    }
    assert.deepEqual(api.logs, []);
    assert.equal((await rawRequest(api.port, '/api/v1/namespaces/default/pods', { token: TEST_TOKEN })).status, 200);
  });
});

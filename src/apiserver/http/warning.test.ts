import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { warningHeaders } from './warning.js';

/** The Warning header as a client receives it, its bytes read as UTF-8. */
async function roundTrip(headers: Record<string, string>): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    return Buffer.from(String(res.headers.warning), 'latin1').toString('utf8');
  } finally {
    server.close();
  }
}

void describe('Warning headers', () => {
  void it('quotes each distinct warning once with code 299 and agent -', () => {
    assert.deepEqual(warningHeaders([]), {});
    assert.deepEqual(warningHeaders(['unknown field "spec.x"', 'unknown field "spec.x"', 'a \\ b']), {
      Warning: '299 - "unknown field \\"spec.x\\"", 299 - "a \\\\ b"',
    });
  });

  void it('carries non-ASCII text as UTF-8 and control characters as spaces', async () => {
    const headers = warningHeaders(['unknown field "metadata.labels.ä日本"', 'two\nlines\r']);
    assert.equal(await roundTrip(headers), '299 - "unknown field \\"metadata.labels.ä日本\\"", 299 - "two lines "');
  });
});

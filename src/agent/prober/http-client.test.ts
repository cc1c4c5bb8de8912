import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpTimeoutError, rawGet } from './http-client.js';

/** A TCP server answering each request with the raw bytes of `answers[path]` (sent in two pieces). */
function rawServer(answers: Readonly<Record<string, string>>, seen: string[]): net.Server {
  return net.createServer((socket) => {
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      seen.push(text);
      const path = (/^GET (\S+)/.exec(text)?.[1] ?? '').split('?')[0] ?? '';
      const answer = answers[path];
      if (answer === undefined) return; // never answers: the client times out
      const half = Math.floor(answer.length / 2);
      socket.write(answer.slice(0, half));
      setImmediate(() => {
        socket.end(answer.slice(half));
      });
    });
    socket.on('error', () => undefined);
  });
}

void describe('the minimal HTTP client', () => {
  const seen: string[] = [];
  let port = 0;
  const server = rawServer({
    '/length': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello and more',
    '/chunked': 'HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nbusy\r\n6\r\n right\r\n0\r\n\r\n',
    '/close': 'HTTP/1.0 302 Found\r\nLocation: /length\r\n\r\nuntil the end',
    '/garbage': 'SSH-2.0-OpenSSH\r\n\r\n',
  }, seen);
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  after(() => {
    server.close();
  });
  const get = (path: string, max = 100, timeoutMs = 1000) => rawGet(new URL(`http://127.0.0.1:${port}${path}`), { 'user-agent': 'ua', accept: '*/*' }, max, timeoutMs);

  void it('reads Content-Length, chunked and close-delimited bodies, at most maxBody bytes', async () => {
    assert.deepEqual(await get('/length'), { status: 200, location: undefined, body: 'hello' });
    assert.deepEqual(await get('/chunked'), { status: 503, location: undefined, body: 'busy right' });
    assert.deepEqual(await get('/close'), { status: 302, location: '/length', body: 'until the end' });
    assert.equal((await get('/close', 5)).body, 'until');
  });
  void it('sends the request line, host, headers and Connection: close', async () => {
    seen.length = 0;
    await get('/length?a=1');
    assert.equal(seen[0], `GET /length?a=1 HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nuser-agent: ua\r\naccept: */*\r\nconnection: close\r\n\r\n`);
  });
  void it('fails on a malformed answer, a timeout, a header with a line break, or a refused connection', async () => {
    await assert.rejects(get('/garbage'), /malformed HTTP response/);
    await assert.rejects(get('/silent', 100, 200), HttpTimeoutError);
    await assert.rejects(rawGet(new URL(`http://127.0.0.1:${port}/`), { 'x-a': 'b\r\nx-evil: 1' }, 10, 1000), /invalid header/);
    await assert.rejects(rawGet(new URL('http://127.0.0.1:1/'), {}, 10, 1000), /ECONNREFUSED/);
  });
});

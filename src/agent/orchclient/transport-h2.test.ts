import assert from 'node:assert/strict';
import { once } from 'node:events';
import { constants as h2, createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, beforeEach, describe, it } from 'node:test';
import { realClock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { createCertificate, type IssuedCertificate } from '../server/index.js';
import { createTransport, type Transport } from './transport.js';

let ca: IssuedCertificate;
let serving: IssuedCertificate;
let client: IssuedCertificate;
let server: Http2SecureServer;
let url: string;
const sessions: ServerHttp2Session[] = [];
let seen: { method: string; version: string; user: string; session: number }[] = [];
/** Answers the next request of this method in a special way, once. */
let misbehave: { method: string; how: 'destroy-session' | 'refuse' } | undefined;

// One handler for both protocols: what it uses, HTTP/2's compatibility objects have too.
const handler = (req: IncomingMessage, res: ServerResponse): void => {
  const peer = (req.socket as Partial<TLSSocket>).getPeerCertificate?.();
  const user = String(peer?.subject.CN ?? '');
  const h2req = 'stream' in req ? req as unknown as Http2ServerRequest : undefined;
  seen.push({ method: req.method ?? '', version: req.httpVersion, user, session: h2req === undefined ? -1 : sessions.indexOf(h2req.stream.session as ServerHttp2Session) });
  if (misbehave !== undefined && misbehave.method === req.method && h2req !== undefined) {
    const how = misbehave.how;
    misbehave = undefined;
    if (how === 'destroy-session') h2req.stream.session?.destroy();
    else h2req.stream.close(h2.NGHTTP2_REFUSED_STREAM);
    return;
  }
  if (req.url?.startsWith('/silent') === true) return;
  if (req.url?.startsWith('/watch') === true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED","object":{}}\n');
    setTimeout(() => { res.end('{"type":"DELETED","object":{}}\n'); }, 20);
    return;
  }
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(`{"version":"${req.httpVersion}"}`); });
};

before(async () => {
  ca = await createCertificate({ subject: { commonName: 'ca' }, isCA: true, keyType: 'ecdsa' });
  serving = await createCertificate({ subject: { commonName: 'api' }, issuer: ca, serverAuth: true, keyType: 'ecdsa', altNames: ['127.0.0.1', 'localhost'] });
  client = await createCertificate({ subject: { commonName: 'node-1' }, issuer: ca, clientAuth: true, keyType: 'ecdsa' });
  server = createSecureServer({ cert: serving.certPem, key: serving.keyPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: false, allowHTTP1: true }, handler as unknown as (req: Http2ServerRequest, res: Http2ServerResponse) => void);
  server.on('session', (s: ServerHttp2Session) => sessions.push(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => {
  for (const s of sessions) s.destroy();
  server.close(() => { resolve(); });
}));
beforeEach(() => {
  seen = [];
  misbehave = undefined;
});

function transport(server_ = url, timeoutMs?: number): Transport {
  return createTransport({
    connection: { server: server_, ca: Buffer.from(ca.certPem), clientCert: Buffer.from(client.certPem), clientKey: Buffer.from(client.keyPem), insecureSkipTLSVerify: false },
    clock: realClock,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

const send = (t: Transport, method: string, path = '/api/v1/nodes/n1'): Promise<{ status: number; text: string }> =>
  t.send({ method, path, accept: 'application/json', ...(method === 'GET' ? {} : { body: Buffer.from('{}') }) });

void describe('the transport over HTTP/2', () => {
  void it('sends every request, with the client certificate, as streams of one connection', async () => {
    const t = transport();
    const first = sessions.length;
    try {
      const answers = await Promise.all(['GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'GET'].map((m) => send(t, m)));
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
      assert.equal(answers[0]?.text, '{"version":"2.0"}');
      assert.deepEqual(new Set(seen.map((s) => `${s.version} ${s.user} ${s.session}`)), new Set([`2.0 node-1 ${first}`]));
      assert.equal(sessions.length, first + 1);
    } finally {
      t.close();
    }
  });

  void it('streams a watch, and sends requests on the same connection while it is open', async () => {
    const t = transport();
    try {
      const watch = await t.open({ method: 'GET', path: '/watch/pods', accept: 'application/json' });
      assert.equal(watch.status, 200);
      assert.equal((await send(t, 'GET')).status, 200);
      const chunks: Buffer[] = [];
      for await (const chunk of watch.body) chunks.push(chunk as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), '{"type":"ADDED","object":{}}\n{"type":"DELETED","object":{}}\n');
      assert.equal(new Set(seen.map((s) => s.session)).size, 1);
    } finally {
      t.close();
    }
  });

  void it('times an attempt out, and aborts one on its signal', async () => {
    const t = transport(url, 200);
    try {
      await assert.rejects(send(t, 'GET', '/silent'), (err: unknown) => err instanceof OrchError && err.code === 'ORCHCLIENT_TIMEOUT' && /no answer within 200 ms/.test(err.message));
      const abort = new AbortController();
      const pending = t.send({ method: 'GET', path: '/silent', accept: 'application/json', timeoutMs: 0, signal: abort.signal });
      abort.abort();
      await assert.rejects(pending, (err: unknown) => err instanceof OrchError && err.code === 'ORCHCLIENT_ABORTED');
      assert.equal((await send(t, 'GET')).status, 200);
    } finally {
      t.close();
    }
  });

  void it('sends an idempotent request again on a new connection when the used one went away', async () => {
    const t = transport();
    try {
      assert.equal((await send(t, 'GET')).status, 200);
      misbehave = { method: 'PUT', how: 'destroy-session' };
      assert.equal((await send(t, 'PUT')).status, 200);
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'PUT', 'PUT']);
      assert.notEqual(seen[1]?.session, seen[2]?.session);
    } finally {
      t.close();
    }
  });

  void it('does not send a POST again when its connection went away: the caller judges that', async () => {
    const t = transport();
    try {
      assert.equal((await send(t, 'GET')).status, 200);
      misbehave = { method: 'POST', how: 'destroy-session' };
      await assert.rejects(send(t, 'POST'), (err: unknown) => err instanceof OrchError && err.category === 'unavailable');
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'POST']);
      assert.equal((await send(t, 'GET')).status, 200);
    } finally {
      t.close();
    }
  });

  void it('sends a POST again when the server refused its stream unprocessed (REFUSED_STREAM)', async () => {
    const t = transport();
    try {
      misbehave = { method: 'POST', how: 'refuse' };
      assert.equal((await send(t, 'POST')).status, 200);
      assert.deepEqual(seen.map((s) => s.method), ['POST', 'POST']);
    } finally {
      t.close();
    }
  });

  void it('connects again after close()', async () => {
    const t = transport();
    try {
      assert.equal((await send(t, 'GET')).status, 200);
      t.close();
      assert.equal((await send(t, 'GET')).status, 200);
      assert.equal(new Set(seen.map((s) => s.session)).size, 2);
    } finally {
      t.close();
    }
  });
});

void describe('the transport toward a server that offers only HTTP/1.1', () => {
  let h1: HttpsServer;
  let h1url: string;
  before(async () => {
    h1 = createHttpsServer({ cert: serving.certPem, key: serving.keyPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: false }, handler);
    h1.listen(0, '127.0.0.1');
    await once(h1, 'listening');
    h1url = `https://127.0.0.1:${(h1.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => { h1.close(() => { resolve(); }); h1.closeAllConnections(); }));

  void it('speaks HTTP/1.1, requests and watches', async () => {
    const t = transport(h1url);
    try {
      assert.equal((await send(t, 'GET')).text, '{"version":"1.1"}');
      const watch = await t.open({ method: 'GET', path: '/watch/pods', accept: 'application/json' });
      const chunks: Buffer[] = [];
      for await (const chunk of watch.body) chunks.push(chunk as Buffer);
      assert.match(Buffer.concat(chunks).toString(), /DELETED/);
      assert.deepEqual(seen.map((s) => `${s.version} ${s.user}`), ['1.1 node-1', '1.1 node-1']);
    } finally {
      t.close();
    }
  });
});

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { isOrchError } from '../../api/errors.js';
import { CONSOLE_ASSETS_DIR, CONTENT_SECURITY_POLICY, loadConsoleAssets, withConsole } from './index.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

void describe('the console\'s assets and handler', () => {
  let dir: string;
  let server: Server;
  let port = 0;
  const passed: string[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-assets-'));
    mkdirSync(join(dir, 'views'));
    writeFileSync(join(dir, 'index.html'), `<!doctype html><title>x</title>${' '.repeat(400)}<script type="module" src="main.js"></script>`);
    writeFileSync(join(dir, 'main.js'), 'export {};\n');
    writeFileSync(join(dir, 'views', 'pods.js'), `export const x = "${'a'.repeat(2000)}";\n`);
    writeFileSync(join(dir, 'main.test.js'), 'test');
    writeFileSync(join(dir, 'testing.js'), 'fake');
    writeFileSync(join(dir, 'notes.txt'), 'not served');
    const handler = withConsole({
      assets: loadConsoleAssets(dir),
      next: (req, res) => {
        passed.push(req.url ?? '');
        res.writeHead(401).end();
      },
    });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }); });
    });
    req.on('error', reject);
    req.end();
  });

  void it('serves the page and its modules with the Content-Security-Policy, without authentication', async () => {
    const index = await get('/console/');
    assert.equal(index.status, 200);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(index.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
    assert.match(index.body.toString(), /src="main.js"/);
    const module = await get('/console/views/pods.js?v=1');
    assert.equal(module.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(module.status, 200);
    assert.deepEqual(passed, []);
  });

  void it('compresses where the browser accepts gzip, and answers 304 to a matching ETag', async () => {
    const plain = await get('/console/views/pods.js');
    const gz = await get('/console/views/pods.js', { 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gz.body.length < plain.body.length / 10);
    assert.deepEqual(gunzipSync(gz.body), plain.body);
    assert.equal((await get('/console/views/pods.js', { 'Accept-Encoding': 'gzip;q=0' })).headers['content-encoding'], undefined);
    const etag = String(plain.headers.etag);
    const again = await get('/console/views/pods.js', { 'If-None-Match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const head = await get('/console/', {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });

  void it('redirects /console, refuses writes, and serves nothing but the assets', async () => {
    const bare = await get('/console?x=1');
    assert.deepEqual([bare.status, bare.headers.location], [301, '/console/']);
    const post = await get('/console/', {}, 'POST');
    assert.deepEqual([post.status, post.headers.allow], [405, 'GET, HEAD']);
    for (const path of ['/console/main.test.js', '/console/testing.js', '/console/notes.txt', '/console/../main.js', '/console/%2e%2e/etc/passwd', '/console/views/']) {
      assert.equal((await get(path)).status, 404, path);
    }
    for (const path of ['/api/v1/pods', '/consoles', '/']) await get(path);
    assert.deepEqual(passed, ['/api/v1/pods', '/consoles', '/'], 'everything else goes to the router');
  });

  void it('refuses to start without a built index.html, naming the directory', () => {
    const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
    try {
      assert.throws(() => loadConsoleAssets(empty), (err: unknown) => isOrchError(err) && err.code === 'APISERVER_CONSOLE_ASSETS' && err.message.includes(empty));
      assert.throws(() => loadConsoleAssets(join(empty, 'missing')), (err: unknown) => isOrchError(err) && err.code === 'APISERVER_CONSOLE_ASSETS');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  void it('builds a page with no inline script or style and no address outside its origin', () => {
    const assets = loadConsoleAssets(CONSOLE_ASSETS_DIR);
    const names = assets.all().map((a) => a.name);
    for (const name of ['index.html', 'main.js', 'console.css', 'views/pods.js']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    assert.ok(!names.some((n) => n.endsWith('.test.js') || n.endsWith('testing.js')), names.join(', '));
    const html = readFileSync(join(CONSOLE_ASSETS_DIR, 'index.html'), 'utf8');
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
    for (const a of assets.all()) {
      if (!/\.(js|css|html)$/.test(a.name)) continue;
      const text = a.body.toString('utf8');
      assert.doesNotMatch(text, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, `${a.name} names an address outside the origin`);
      assert.doesNotMatch(text, /\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|\beval\(|new Function\(/, `${a.name} parses markup or code from strings`);
    }
  });
});

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against a real
 * cluster: orch-apiserver (SQLite, its control loops, node lifecycle on a 6 s grace) and one
 * node agent on its own containerd. Shows: the page is served to anyone under a strict
 * Content-Security-Policy while the API still wants a token; a wrong token gets an error and
 * no data; a token from `kubectl create token` signs in and shows the Ready node; a pod created
 * with kubectl appears and turns Running without a reload; its page follows its log and shows
 * a line the pod prints after the page opened; events are listed and filtered; the watches
 * resume after the API server restarts; the node turns Unknown once its agent stops. Each view
 * is saved as a screenshot (the directory is printed).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { runKubectl, v1Pod } from '../helpers/apiserver.js';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const GRACE_S = 6;
let cluster: Cluster;
let browser: TestBrowser;
let configDir: string;
let page: Page;
let errors: string[] = [];
const pageErrors: string[][] = [];

/** What a page saw, for a failure's message: its script errors and its failed requests. */
function sawOf(seen: { errors: string[]; network: string[] }): string {
  return `errors: ${JSON.stringify(seen.errors)}\nnetwork: ${JSON.stringify(seen.network)}`;
}

/**
 * Opens the console's sign-in form; if it never shows, says what the page saw. Chromium fails
 * every request in flight with ERR_NETWORK_CHANGED when an interface or address changes on the
 * machine (crbug 41465264; other tests' pod sandboxes add veths), so a page whose document or
 * scripts were cut that way is loaded again, up to four times in all, as a user would; the
 * page's own reads recover by themselves (the reflector's back-off, the sign-in check's and the
 * pod page's retries).
 */
async function openConsole(p: Page, seen: { errors: string[]; network: string[] }): Promise<void> {
  const open = async (): Promise<void> => {
    await p.goto(`${cluster.server.url}/console/`);
    await p.waitForSelector('#token', { timeout: 15_000 });
  };
  // Cut by a network change: the document's or a script's request failed with it, or goto ended
  // on Chromium's error page or was overtaken by Chromium reloading that page by itself.
  const cut = (err: unknown): boolean => /ERR_NETWORK_CHANGED|chrome-error:\/\/|interrupted by another navigation/.test(String(err))
    || seen.network.some((line) => line.includes('/console/') && /ERR_NETWORK_CHANGED|ERR_ABORTED/.test(line));
  for (let attempt = 1; ; attempt++) {
    try {
      await open();
      return;
    } catch (err) {
      if (attempt < 4 && cut(err)) {
        process.stdout.write(`# the console's page was cut by a network change; loading it again: ${JSON.stringify(seen.network)} ${String(err).split('\n')[0] ?? ''}\n`);
        seen.network.length = 0;
        continue;
      }
      const body = (await p.content().catch(() => '(no content)')).slice(0, 2000);
      throw new Error(`the sign-in form did not show: ${String(err)}\n${sawOf(seen)}\npage: ${body}`);
    }
  }
}

/** Opens the console and signs in with `token`. */
async function signIn(p: Page, token: string, seen: { errors: string[]; network: string[] }): Promise<void> {
  await openConsole(p, seen);
  await p.fill('#token', token);
  await p.click('button[type=submit]');
}

/** Waits for the console's shell after a sign-in; if it never shows, says what the page saw. */
async function signedIn(p: Page, seen: { errors: string[]; network: string[] }): Promise<void> {
  try {
    await p.waitForSelector('.shell', { timeout: 15_000 });
  } catch (err) {
    const shown = await p.textContent('#sign-in-error', { timeout: 1000 }).catch(() => '(no sign-in form)');
    throw new Error(`not signed in: ${String(err)}\nsign-in error: ${JSON.stringify(shown)}\n${sawOf(seen)}`);
  }
}

before(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'console-test-'));
  // The lease is renewed every second (a quarter of 4 s): well inside the server's 6 s grace.
  const config = join(configDir, 'nodeagent.yaml');
  await writeFile(config, 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\nnodeLeaseDurationSeconds: 4\n');
  cluster = await startCluster({
    controllers: true,
    serverArgs: [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s', '--node-startup-grace-period=30s'],
    agentArgs: [`--config=${config}`],
  });
  browser = await launchBrowser('console');
});

after(async () => {
  await browser.close();
  await cluster.stop();
  await removeTempDir(configDir);
});

void describe('the web console in Chromium against a real cluster', () => {
  void it('serves the page to anyone under a strict Content-Security-Policy; the API still wants a token', async () => {
    const client = cluster.server.client;
    const index = await client.request('GET', '/console/', { token: null, headers: { Accept: 'text/html' } });
    assert.equal(index.status, 200);
    assert.match(String(index.headers['content-type']), /^text\/html/);
    const csp = String(index.headers['content-security-policy']);
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) assert.ok(csp.includes(directive), csp);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.doesNotMatch(index.text, /<script(?![^>]*\bsrc=)[^>]*>|\sstyle=/, 'no inline script or style');
    assert.equal((await client.request('GET', '/console/main.js', { token: null })).status, 200);
    assert.equal((await client.request('GET', '/console/nothing.js', { token: null })).status, 404);
    assert.equal((await client.request('POST', '/console/', { token: null, body: {} })).status, 405);
    assert.equal((await client.request('GET', '/api/v1/pods', { token: null })).status, 401);
    assert.equal((await client.request('GET', '/api/v1/pods', { token: 'not-a-token' })).status, 401);
  });

  void it('answers a wrong token with an error and reads no data', async () => {
    const wrong = await browser.newPage();
    pageErrors.push(wrong.errors);
    const reads: string[] = [];
    wrong.page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (!path.startsWith('/console/')) reads.push(path);
    });
    await openConsole(wrong.page, wrong);
    await browser.screenshot(wrong.page, 'sign-in');
    await signIn(wrong.page, 'not-a-token', wrong);
    await wrong.page.waitForSelector('#sign-in-error:not([hidden])');
    assert.match((await wrong.page.textContent('#sign-in-error')) ?? '', /refused this token \(401 Unauthorized\)/);
    assert.equal(await wrong.page.locator('.shell').count(), 0, 'no console behind a refused token');
    assert.equal(await wrong.page.evaluate('sessionStorage.length'), 0, 'a refused token is not kept');
    // The check is sent again when a network change cut it (the sign-in's retry).
    assert.deepEqual([...new Set(reads)], ['/apis/authentication.k8s.io/v1/selfsubjectreviews'], 'only the sign-in check reached the API');
    await browser.screenshot(wrong.page, 'sign-in-refused');
    await wrong.context.close();
  });

  void it('signs in with a token from kubectl create token and shows the Ready node', async () => {
    const token = (await runKubectl(cluster.server, ['create', 'token', 'default'])).stdout.trim();
    const opened = await browser.newPage();
    ({ page, errors } = opened);
    pageErrors.push(errors);
    await signIn(page, token, opened);
    await signedIn(page, opened);
    await page.waitForSelector(`[data-node="${cluster.node}"][data-ready="True"]`);
    assert.equal(await page.textContent('.user'), 'system:serviceaccount:default:default');
    assert.equal(await page.evaluate('sessionStorage.getItem("orch-console-token") !== null'), true);
    await page.waitForSelector('.conn-live');
    // The node agent's usage reaches the chart through the resource metrics API (scraped every 10 s).
    // Attached, not visible: a flat line (the same usage at each scrape) has a box of height 0,
    // which playwright counts as hidden.
    await page.waitForSelector(`[data-node="${cluster.node}"] [data-resource="memory"] .spark-line`, { state: 'attached', timeout: 60_000 });
    await browser.screenshot(page, 'nodes');
    await page.click(`[data-node="${cluster.node}"] .card-title`);
    await page.waitForSelector('.view-node [data-condition="Ready"]');
    await browser.screenshot(page, 'node');
  });

  void it('shows a pod created with kubectl appear and turn Running without a reload', async () => {
    await page.click('a.nav-link[data-section="pods"]');
    await page.waitForSelector('.view-pods');
    // Gone if the page reloads.
    await page.evaluate('window.sameDocument = true');
    const file = join(configDir, 'ticker.json');
    const pod = v1Pod('ticker', '');
    await writeFile(file, JSON.stringify({
      ...pod,
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox:1.35', command: ['sh', '-c', 'echo started; exec sleep 3600'] }] },
    }));
    await runKubectl(cluster.server, ['create', '-f', file]);
    const row = '.vrow[data-key="default/ticker"]';
    await page.waitForSelector(row);
    await page.locator(`${row} .c-status`, { hasText: /^Running$/ }).waitFor({ timeout: 60_000 });
    assert.equal(await page.textContent(`${row} .c-node`), cluster.node);
    assert.equal(await page.evaluate('window.sameDocument'), true, 'no reload');
    await browser.screenshot(page, 'pods');
  });

  void it('follows a pod\'s log and shows a line the pod prints after the page opened', async () => {
    await page.click('.vrow[data-key="default/ticker"]');
    await page.waitForSelector('.view-pod [data-container="main"]');
    await page.waitForSelector('.log-state.following');
    await page.locator('#log .log-line', { hasText: 'started' }).first().waitFor();
    const marker = `console-line-${randomBytes(4).toString('hex')}`;
    // Written to the container's own stdout: a line of its log.
    await runKubectl(cluster.server, ['exec', 'ticker', '--', 'sh', '-c', `echo ${marker} > /proc/1/fd/1`]);
    await page.locator('#log .log-line', { hasText: marker }).waitFor({ timeout: 30_000 });
    await browser.screenshot(page, 'pod');
  });

  void it('lists the cluster\'s events as they come and filters them', async () => {
    await page.click('a.nav-link[data-section="events"]');
    await page.waitForSelector('.view-events .vrow[data-key]');
    await page.fill('#filter-q', 'ticker');
    await waitFor('only the events of pod/ticker listed', async () => {
      const objects = await page.locator('.view-events .vrow:not([hidden]) .c-object').allTextContents();
      return objects.length > 0 && objects.every((o) => o === 'pod/ticker');
    });
    assert.match(page.url(), /#\/events\?q=ticker$/);
    const reasons = await page.locator('.view-events .vrow:not([hidden]) .c-reason').allTextContents();
    for (const reason of ['Scheduled', 'Started']) assert.ok(reasons.includes(reason), reasons.join(','));
    await browser.screenshot(page, 'events');
  });

  void it('resumes its watches after the API server restarts', async () => {
    await page.click('a.nav-link[data-section="pods"]');
    await page.waitForSelector('.view-pods .conn-live, .conn-live');
    await cluster.server.pause();
    await page.waitForSelector('.conn-retrying', { timeout: 30_000 });
    await browser.screenshot(page, 'reconnecting');
    await cluster.server.resume();
    await page.waitForSelector('.conn-live', { timeout: 60_000 });
    const created = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body: v1Pod('after-restart', '') });
    assert.equal(created.status, 201, created.text);
    await page.waitForSelector('.vrow[data-key="default/after-restart"]', { timeout: 30_000 });
  });

  void it('turns the node Unknown within seconds of its agent stopping', async () => {
    await page.click('a.nav-link[data-section="nodes"]');
    await page.waitForSelector(`[data-node="${cluster.node}"][data-ready="True"]`);
    const stopped = Date.now();
    await cluster.agent.stop();
    await page.waitForSelector(`[data-node="${cluster.node}"][data-ready="Unknown"]`, { timeout: (GRACE_S + 30) * 1000 });
    const seconds = (Date.now() - stopped) / 1000;
    process.stdout.write(`# node Unknown on the page ${seconds.toFixed(1)} s after its agent stopped (grace ${GRACE_S} s)\n`);
    assert.ok(await page.locator(`[data-node="${cluster.node}"] .lease.expired`).count() === 1, 'the lease shows its age past its duration');
    await browser.screenshot(page, 'node-unknown');
  });

  void it('hit no script error and no Content-Security-Policy refusal', () => {
    assert.deepEqual(pageErrors.flat(), []);
  });
});

/**
 * The web console with a few thousand pods: orch-apiserver (SQLite) with 10 simulated nodes
 * (`nodeagent simulate`, the agent's code over the in-memory runtime) running 3,000 pods created
 * while the pods view is open, in Chromium. The list stays virtualised (a screenful of rows in
 * the DOM whatever the count), scrolls to any pod, and the tab keeps answering: the longest
 * task the page ran stays within a budget while every pod goes from Pending to Running. A page
 * opened on the 3,000 pods lists them (in pages) within the same budget. The figures are printed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';

const NODEAGENT = fileURLToPath(new URL('../../src/cmd/nodeagent.js', import.meta.url));
const NODES = 10;
const PODS = 3000;
/** The longest task the page may run, ms: far above a smooth frame, far below a frozen tab (a loaded 2-core machine runs the server, 10 nodes and the browser). */
const LONGEST_TASK_MS = 1500;
/** Row elements the pods list may hold (a screenful and its overscan). */
const MAX_ROWS = 80;

/** Records the page's long tasks and the longest gap between animation frames. */
const PERF_PROBE = `
  window.perf = { tasks: [], maxGap: 0, last: 0 };
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.perf.tasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
  const frame = (t) => { if (window.perf.last > 0) window.perf.maxGap = Math.max(window.perf.maxGap, t - window.perf.last); window.perf.last = t; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
`;

interface Perf {
  readonly tasks: number[];
  readonly maxGap: number;
}

let server: ApiServer;
let simulator: ChildProcess | undefined;
let simulatorLog = '';
let browser: TestBrowser;

async function readPerf(page: Page): Promise<{ count: number; longest: number; total: number; maxGap: number }> {
  const perf = await page.evaluate<Perf>('window.perf');
  return { count: perf.tasks.length, longest: Math.round(Math.max(0, ...perf.tasks)), total: Math.round(perf.tasks.reduce((a, b) => a + b, 0)), maxGap: Math.round(perf.maxGap) };
}

async function openPods(): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await browser.newPage();
  await page.addInitScript(PERF_PROBE);
  await page.goto(`${server.url}/console/`);
  await page.fill('#token', server.token);
  await page.click('button[type=submit]');
  await page.waitForSelector('.shell');
  await page.click('a.nav-link[data-section="pods"]');
  await page.waitForSelector('.view-pods');
  return { page, errors };
}

before(async () => {
  server = await startApiServer({ storage: 'sqlite' });
  simulator = spawn(process.execPath, [NODEAGENT, 'simulate', '--nodes', String(NODES), '--orchconfig', server.adminKubeconfig, '--max-pods', '400', '--start-delay', '200ms'], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Drained, or the simulator blocks in a write once the pipe is full (a pipe write is synchronous
  // in Node) and neither runs its pods nor answers SIGTERM; the tail is kept for a failure message.
  simulator.stderr?.setEncoding('utf8');
  simulator.stderr?.on('data', (chunk: string) => { simulatorLog = (simulatorLog + chunk).slice(-8192); });
  await waitFor(`${NODES} simulated nodes`, async () => ((await server.client.request('GET', '/api/v1/nodes')).body.items as unknown[] | undefined)?.length === NODES, { timeoutMs: 60_000, intervalMs: 200 });
  browser = await launchBrowser('console-scale');
});

after(async () => {
  await browser.close();
  if (simulator !== undefined && simulator.exitCode === null) {
    const exited = new Promise((resolve) => simulator?.once('exit', resolve));
    simulator.kill('SIGTERM');
    // A simulator that does not stop within its nodes' shutdown is killed, so that the file ends.
    const timer = setTimeout(() => { simulator?.kill('SIGKILL'); }, 30_000);
    await exited;
    clearTimeout(timer);
  }
  await server.stop();
});

void describe('the web console with thousands of pods', () => {
  void it('stays responsive and virtualised while 3,000 pods are created and start', async () => {
    const { page, errors } = await openPods();
    const started = Date.now();
    let next = 0;
    const create = async (): Promise<void> => {
      while (next < PODS) {
        const i = next++;
        const res = await server.client.request('POST', '/api/v1/namespaces/default/pods', {
          body: {
            apiVersion: 'v1', kind: 'Pod', metadata: { name: `bulk-${String(i).padStart(4, '0')}` },
            spec: { nodeName: `sim-${i % NODES}`, containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
          },
        });
        assert.equal(res.status, 201, res.text);
      }
    };
    await Promise.all(Array.from({ length: 16 }, create));
    await page.locator('.view-pods .count', { hasText: /^3000$/ }).waitFor({ timeout: 120_000 });
    await page.check('#filter-problems');
    await page.locator('.view-pods .count', { hasText: /^0 of 3000$/ }).waitFor({ timeout: 300_000 }).catch((err: unknown) => {
      throw new Error(`not every pod turned Running; the simulator's log ends with:\n${simulatorLog}`, { cause: err });
    });
    const seconds = (Date.now() - started) / 1000;
    const perf = await readPerf(page);
    process.stdout.write(`# ${PODS} pods created and Running in ${seconds.toFixed(1)} s with the pods view open: long tasks ${perf.count}, longest ${perf.longest} ms, total ${perf.total} ms; longest gap between frames ${perf.maxGap} ms\n`);
    await page.uncheck('#filter-problems');
    const rows = await page.locator('.view-pods .vrow').count();
    assert.ok(rows <= MAX_ROWS, `${rows} row elements for ${PODS} pods`);
    await page.evaluate('(() => { const el = document.querySelector(".view-pods .vlist"); el.scrollTop = el.scrollHeight; })()');
    await page.locator('.vrow[data-key="default/bulk-2999"]:not([hidden])').waitFor();
    await page.evaluate('(() => { document.querySelector(".view-pods .vlist").scrollTop = 1500 * 36; })()');
    await page.locator('.vrow[data-key="default/bulk-1500"]:not([hidden])').waitFor();
    await browser.screenshot(page, 'pods-3000');
    assert.ok(perf.longest <= LONGEST_TASK_MS, `the longest task took ${perf.longest} ms (budget ${LONGEST_TASK_MS} ms)`);
    assert.deepEqual(errors, []);
  });

  void it('opens on 3,000 pods within the same budget', async () => {
    const { page, errors } = await openPods();
    const opened = Date.now();
    await page.locator('.view-pods .count', { hasText: /^3000$/ }).waitFor({ timeout: 60_000 });
    const seconds = (Date.now() - opened) / 1000;
    const perf = await readPerf(page);
    process.stdout.write(`# a new page listed ${PODS} pods in ${seconds.toFixed(2)} s: long tasks ${perf.count}, longest ${perf.longest} ms, total ${perf.total} ms\n`);
    assert.ok(perf.longest <= LONGEST_TASK_MS, `the longest task took ${perf.longest} ms (budget ${LONGEST_TASK_MS} ms)`);
    assert.ok((await page.locator('.view-pods .vrow').count()) <= MAX_ROWS);
    await page.fill('#filter-q', 'bulk-2');
    await page.locator('.view-pods .count', { hasText: /^1000 of 3000$/ }).waitFor();
    assert.deepEqual(errors, []);
  });
});

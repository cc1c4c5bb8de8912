/**
 * The web console bench: the page's weight and how soon it shows a change. One orch-apiserver
 * (SQLite, no control loops), one simulated node (its Lease renewed by the test helper) and
 * one pod bound to it, shown by the console's pods view in Debian's Chromium (playwright-core).
 *
 * - Size: every asset the server holds for /console/ (files, bytes, gzip bytes as served), and
 *   what the browser transferred to open the signed-in page.
 * - Latency: 20 status changes of the pod (5 with --quick), each a merge patch of
 *   status.reason through pods/status; from just before the PATCH to the moment the row's
 *   status cell shows the new value (a MutationObserver in the page notes the time), next to a
 *   plain watch client in this process receiving the same change (the baseline: what the
 *   console adds is its fetch stream, parse and draw).
 *
 *   node dist/bench/console.js [--quick]
 */
import { parseArgs } from 'node:util';
import { loadConsoleAssets } from '../src/apiserver/console/index.js';
import { startApiServer } from '../test/helpers/apiserver.js';
import { launchBrowser } from '../test/helpers/browser.js';
import { simulateNode } from '../test/helpers/nodes.js';
import { waitFor } from '../test/helpers/wait.js';
import { exitOnSignals, formatTable, isMain, ms, percentile, type Row } from './table.js';

export interface ConsoleBenchResult {
  readonly files: number;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly transferredBytes: number;
  readonly pageMs: readonly number[];
  readonly watchMs: readonly number[];
}

/** Notes when the probe pod's status cell changes text, with the page's clock (the machine's). */
const OBSERVER = `
  window.seen = [];
  new MutationObserver(() => {
    const cell = document.querySelector('.vrow[data-key="default/probe"] .c-status');
    const text = cell === null ? '' : cell.textContent;
    const last = window.seen[window.seen.length - 1];
    if (last === undefined || last.text !== text) window.seen.push({ text, t: Date.now() });
  }).observe(document.querySelector('.view-pods'), { subtree: true, childList: true, characterData: true, attributes: true });
`;

export async function runConsoleBench(options: { quick?: boolean } = {}): Promise<ConsoleBenchResult> {
  const changes = options.quick === true ? 5 : 20;
  const assets = loadConsoleAssets().all();
  const bytes = assets.reduce((n, a) => n + a.body.length, 0);
  const gzipBytes = assets.reduce((n, a) => n + (a.gzip ?? a.body).length, 0);
  const server = await startApiServer({ storage: 'sqlite' });
  const browser = await launchBrowser('console-bench');
  const node = await simulateNode(server.client, 'bench-node');
  try {
    const created = await server.client.request('POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { nodeName: 'bench-node', containers: [{ name: 'c', image: 'registry.example/app:1' }] } },
    });
    if (created.status !== 201) throw new Error(`creating the probe pod: ${created.status} ${created.text}`);
    const { page } = await browser.newPage();
    await page.goto(`${server.url}/console/`);
    await page.fill('#token', server.token);
    await page.click('button[type=submit]');
    await page.waitForSelector('.conn-live');
    await page.goto(`${server.url}/console/#/pods?q=probe`);
    await page.waitForSelector('.vrow[data-key="default/probe"]');
    const transferredBytes = Number(await page.evaluate('performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.startsWith("/console/")).reduce((n, e) => n + e.transferSize, 0) + performance.getEntriesByType("navigation").reduce((n, e) => n + e.transferSize, 0)'));
    await page.evaluate(OBSERVER);
    const rv = (created.body.metadata as { resourceVersion?: string }).resourceVersion ?? '0';
    const watch = await server.client.watch(`/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dprobe&resourceVersion=${rv}`);
    const pageMs: number[] = [];
    const watchMs: number[] = [];
    for (let i = 0; i < changes; i++) {
      const reason = `Step${i}`;
      const t0 = Date.now();
      const patched = await server.client.request('PATCH', '/api/v1/namespaces/default/pods/probe/status', {
        body: { status: { reason } }, contentType: 'application/merge-patch+json',
      });
      if (patched.status !== 200) throw new Error(`patching the probe pod: ${patched.status} ${patched.text}`);
      for (;;) {
        const event = await watch.next(30_000);
        const status = (event.object as { status?: { reason?: string } }).status;
        if (status?.reason === reason) break;
      }
      watchMs.push(Date.now() - t0);
      const shown = await waitFor(`the page showing ${reason}`, async () => {
        const seen = await page.evaluate<{ text: string; t: number }[]>('window.seen');
        return seen.find((s) => s.text === reason);
      }, { timeoutMs: 30_000, intervalMs: 20 });
      pageMs.push(shown.t - t0);
      process.stderr.write(`console bench: change ${i + 1}/${changes}: page ${shown.t - t0} ms, watch ${watchMs[watchMs.length - 1] ?? 0} ms\n`);
    }
    watch.close();
    return { files: assets.length, bytes, gzipBytes, transferredBytes, pageMs, watchMs };
  } finally {
    node.stop();
    await browser.close();
    await server.stop();
  }
}

export function consoleRows(r: ConsoleBenchResult): Row[] {
  const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
  return [
    { measure: `console page: ${r.files} assets, bytes / gzip as served; transferred to open it`, baseline: '', ours: `${kib(r.bytes)} / ${kib(r.gzipBytes)}; ${kib(r.transferredBytes)}`, target: '' },
    {
      measure: `console: pod status change (PATCH) → shown on the page, p50 / p99 of ${r.pageMs.length}`,
      baseline: `watch client ${ms(percentile(r.watchMs, 50))} / ${ms(percentile(r.watchMs, 99))} ms`,
      ours: `${ms(percentile(r.pageMs, 50))} / ${ms(percentile(r.pageMs, 99))} ms`, target: '',
    },
  ];
}

if (isMain(import.meta.url)) {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const result = await runConsoleBench({ quick: values.quick });
  process.stdout.write(`${formatTable(consoleRows(result)).join('\n')}\n`);
}

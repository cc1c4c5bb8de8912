/**
 * Debian's Chromium (/usr/bin/chromium, package `chromium`) driven by playwright-core for the
 * browser tests: headless, no sandbox (the tests run as root), nothing fetched from the network
 * (no background networking, component updates or sync: the machine has no internet), each
 * launch on a fresh temporary profile of playwright's. Playwright never downloads a browser here.
 * A missing Chromium fails with a message naming the package. Screenshots go to one artifacts
 * directory per test file (kept after the run), printed so that a developer can look at them.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
];

export interface TestBrowser {
  readonly browser: Browser;
  /** Where screenshots go (kept after the run). */
  readonly artifacts: string;
  /** A new context (its own session storage) trusting any certificate (the API server's CA is the test's own) and a page in it. */
  newPage(): Promise<{ context: BrowserContext; page: Page; errors: string[]; network: string[] }>;
  /** A full-page screenshot `<artifacts>/<name>.png`; resolves to its path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Launches Chromium. `name` names the artifacts directory (under $CONSOLE_ARTIFACTS when set, else a new temporary one). */
export async function launchBrowser(name: string): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium package (bash scripts/install-packages.sh installs it)`);
  }
  const base = process.env.CONSOLE_ARTIFACTS;
  const artifacts = base === undefined || base === '' ? await mkdtemp(join(tmpdir(), `${name}-artifacts-`)) : join(base, name);
  await mkdir(artifacts, { recursive: true });
  process.stdout.write(`# ${name}: screenshots in ${artifacts}\n`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    artifacts,
    async newPage() {
      const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      // Script errors and Content-Security-Policy refusals; Chromium's line for each non-2xx
      // answer ("Failed to load resource") is left out, as tests provoke 401s on purpose.
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
      });
      // Requests that got no answer and answers of 500 and above, for a failure's message (tests
      // stop the API server on purpose, so these are not errors by themselves).
      const network: string[] = [];
      page.on('requestfailed', (r) => network.push(`${r.method()} ${r.url()} failed: ${r.failure()?.errorText ?? 'unknown'}`));
      page.on('response', (r) => {
        if (r.status() >= 500) network.push(`${r.request().method()} ${r.url()} answered ${r.status()}`);
      });
      return { context, page, errors, network };
    },
    async screenshot(page, shot) {
      const path = join(artifacts, `${shot}.png`);
      await page.screenshot({ path, fullPage: false });
      return path;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
    },
  };
}

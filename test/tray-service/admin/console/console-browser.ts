import { expect } from 'chai';
import type { AxeResults } from 'axe-core';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { closeServer, listen } from '../../../../shared/http/listen.ts';
import { launchLocalChromium } from '../../../../scripts/lib/local-chromium.ts';
import { repoRoot } from '../../../support/run-script.ts';
import { ADMIN_TOKEN } from '../admin-fixtures.ts';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Reported from inside every page: the page's own CSP may refuse an inline listener, not this. */
const WATCH_CSP = `document.addEventListener('securitypolicyviolation', (e) =>
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));`;

export interface ConsoleBrowser {
  /** Headless Chromium, UTC, en-US, only 127.0.0.1 reachable. */
  readonly context: BrowserContext;
  /** Every CSP violation, uncaught exception and console error of every page, as text. */
  readonly problems: string[];
  /** A new page, watched for problems. */
  page(): Promise<Page>;
}

/** Registers hooks giving the enclosing `describe` a browser, closed after it. */
export function useConsoleBrowser(): () => ConsoleBrowser {
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  const problems: string[] = [];
  before(async function () {
    this.timeout(60_000);
    profile = mkdtempSync(join(tmpdir(), 'console-browser-'));
    context = await launchLocalChromium(profile, {
      timezoneId: 'UTC',
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
    });
    await context.addInitScript({ content: WATCH_CSP });
  });
  after(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });
  return () => {
    if (!context) throw new Error('useConsoleBrowser: used before the suite started');
    const theContext = context;
    return {
      context: theContext,
      problems,
      async page() {
        const page = await theContext.newPage();
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(`${page.url()}: ${message.text()}`);
        });
        page.on('pageerror', (error) => problems.push(`${page.url()}: uncaught ${error.message}`));
        return page;
      },
    };
  };
}

/** Registers hooks serving `app()` on a free loopback port; the function gives its base URL. */
export function useListening(app: () => Express): () => string {
  let server: Server | undefined;
  let base = '';
  before(async () => {
    server = await listen(app(), { port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (server) await closeServer(server);
  });
  return () => base;
}

/** The page's elements as these functions see them (the tests' TypeScript has no DOM types). */
interface PageElement {
  getAttribute(name: string): string | null;
}

/** One attribute of every element the locator finds, in document order. */
export function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  // A function, not a string: the page's CSP refuses to evaluate strings inside it.
  return locator.evaluateAll(
    (nodes: PageElement[], attribute: string) => nodes.map((node) => node.getAttribute(attribute)),
    name,
  );
}

/** Polls `read` until it deep-equals `expected` (the page fills in after the API answers). */
export async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let actual = await read();
  while (JSON.stringify(actual) !== JSON.stringify(expected) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    actual = await read();
  }
  expect(actual).to.deep.equal(expected);
}

/** An attribute of the focused element. */
export const focused = (page: Page, name: string) => page.locator(':focus').getAttribute(name);

/** Signs in through the admin sign-in form from wherever `page` was sent, and waits for `back`. */
export async function signIn(page: Page, back: string): Promise<void> {
  await page.fill('input[name=token]', ADMIN_TOKEN);
  await Promise.all([page.waitForURL(back), page.click('button[type=submit]')]);
}

/** Opens the console signed in (through the form, as a person would). */
export async function openConsole(page: Page, base: string, hash = ''): Promise<void> {
  await page.goto(`${base}/admin/console${hash}`);
  if (new URL(page.url()).pathname.endsWith('/login')) {
    // The fragment never reaches the server, so the sign-in brings the browser back without it.
    await signIn(page, `${base}/admin/console`);
    if (hash) await page.goto(`${base}/admin/console${hash}`);
  }
  await page.locator('#tabs').waitFor();
}

/** axe-core's serious and critical violations on the page as it is, each as `rule: targets`. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // page.evaluate runs outside the page's CSP (as devtools would), so axe needs no exception to it.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const results = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as AxeResults;
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

/** Checks a page with axe-core: no serious or critical violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${what}`).to.deep.equal([]);
}

/**
 * Saves a screenshot of the page for docs/operations.md when UPDATE_SCREENSHOTS=1
 * (docs/testing.md); otherwise a run leaves the repository's images alone.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  const dir = join(repoRoot, 'docs', 'images');
  mkdirSync(dir, { recursive: true });
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(dir, `console-${name}.png`), fullPage: false });
}

/** Answers to the page's requests, held back on their way to it (page.route). */
export interface HeldAnswers {
  /** Resolves once the server has answered the first matching request (its answer held). */
  readonly asked: Promise<void>;
  /** Hands every held answer (and later ones) to the page. */
  release(): void;
  /** Releases them and removes the hold. */
  stop(): Promise<void>;
}

/**
 * Holds the server's answers to the page's requests whose URL matches `pattern` until `release()`:
 * each request reaches the real server at once, and its answer arrives late, after the admin moved
 * on or after more happened on the server, as a slow network delivers it.
 */
export async function holdAnswers(page: Page, pattern: string): Promise<HeldAnswers> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let asked = () => {};
  const firstAsked = new Promise<void>((resolve) => (asked = resolve));
  await page.route(pattern, async (route) => {
    const response = await route.fetch();
    asked();
    await released;
    await route.fulfill({ response });
  });
  return {
    asked: firstAsked,
    release,
    async stop() {
      release();
      await page.unroute(pattern);
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchLocalChromium } from '../local-chromium.ts';

/** The demo page (docs/live-tray.md#demo-page) open in headless Chromium, signed in as one user. */
export interface DemoPage {
  /** Resolves once the record `id` is shown; rejects after `timeoutMs`. */
  shown(id: string, timeoutMs: number): Promise<void>;
  /** Resolves once the record `id` is no longer shown. */
  gone(id: string, timeoutMs: number): Promise<void>;
  /** Resolves once the badge (`badge`: unread, `unseen`) reads `count`. */
  badge(which: 'badge' | 'unseen', count: number, timeoutMs: number): Promise<void>;
  /** Resolves once the record `id`'s description reads `text`. */
  described(id: string, text: string, timeoutMs: number): Promise<void>;
  /** The classes of the record `id` (`unread`, `unseen`, ...). */
  classes(id: string): Promise<string[]>;
  clickMarkAllSeen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens `${tray}/demo` as a new user does: pastes the token, connects, and waits for the stream's
 * first event ("Live:"). The page then shows the inbox's first history page, kept current by the
 * stream alone.
 */
export async function openDemoPage(tray: string, token: string): Promise<DemoPage> {
  const dir = mkdtempSync(join(tmpdir(), 'try-stack-demo-'));
  let context: BrowserContext | undefined;
  try {
    context = await launchLocalChromium(dir);
    const page: Page = await context.newPage();
    const answer = await page.goto(`${tray}/demo`);
    if (answer?.status() !== 200) throw new Error(`GET /demo answered ${answer?.status()}: is TRAY_DEMO on?`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.getByText('Live:').waitFor({ timeout: 15_000 });
    const item = (id: string) => page.locator(`#records li[data-id="${id}"]`);
    const opened = context;
    return {
      shown: (id, timeout) => item(id).waitFor({ timeout }),
      gone: (id, timeout) => item(id).waitFor({ state: 'detached', timeout }),
      badge: (which, count, timeout) =>
        page.locator(`#${which}`, { hasText: new RegExp(`^${count}$`) }).waitFor({ timeout }),
      described: (id, text, timeout) => item(id).getByText(text, { exact: true }).waitFor({ timeout }),
      classes: async (id) => ((await item(id).getAttribute('class')) ?? '').split(' '),
      clickMarkAllSeen: () => page.click('#mark-seen'),
      close: async () => {
        await opened.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await context?.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

import { chromium, type BrowserContext } from 'playwright-core';
import { isLoopbackHost } from '../../shared/config/loopback-host.ts';

/** Debian's chromium (scripts/setup.sh installs it); never a browser downloaded by playwright. */
const CHROMIUM = '/usr/bin/chromium';

type ContextOptions = NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>;

/**
 * Headless Debian Chromium on a profile directory of its own, quiet (no updates, sync or QUIC),
 * reaching only loopback (127.0.0.0/8, localhost, ::1: a stack may listen on any of them): a
 * page's link to anywhere else (a web font, a CDN) is refused, so no request of a test or of
 * try-stack's walk leaves the machine. `options` adds context settings (timezone, locale, viewport).
 */
export async function launchLocalChromium(
  profileDir: string,
  options: Omit<ContextOptions, 'executablePath' | 'headless' | 'args'> = {},
): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(profileDir, {
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  await context.route('**/*', (route) =>
    isLoopbackHost(new URL(route.request().url()).hostname) ? route.continue() : route.abort(),
  );
  return context;
}

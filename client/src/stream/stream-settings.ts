import { defaultReconnectPolicy, type ReconnectPolicy } from './reconnect-delay.ts';

/** What openTrayStream takes that must hold before it can work, as the caller gave it. */
export interface StreamSettingsOptions {
  baseUrl: string;
  reconnect?: Partial<ReconnectPolicy> | undefined;
  idleTimeoutMs?: number | undefined;
}

/** openTrayStream's options checked, with the defaults filled in. */
export interface StreamSettings {
  /** The service's absolute URL, without a trailing slash. */
  base: string;
  policy: ReconnectPolicy;
  idleTimeoutMs: number;
}

/** The longest delay a timer counts: a longer one fires at once (browsers and Node alike). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Checks openTrayStream's options when it is called, and fills in the defaults field by field (a
 * field given as undefined takes its default too). A wait that is not a finite number above 0
 * would not show as an error but as a stream reconnecting in a tight loop (NaN and 0 waits end at
 * once), so it is thrown at the call instead, naming the option.
 */
export function streamSettings(options: StreamSettingsOptions): StreamSettings {
  return {
    base: absoluteBase(options.baseUrl),
    policy: {
      initialMs: positive(
        'reconnect.initialMs',
        options.reconnect?.initialMs,
        defaultReconnectPolicy.initialMs,
      ),
      maxMs: positive('reconnect.maxMs', options.reconnect?.maxMs, defaultReconnectPolicy.maxMs),
    },
    // Counted by one timer per read (readSse), unlike the reconnect waits, which wait() splits.
    idleTimeoutMs: timer('idleTimeoutMs', positive('idleTimeoutMs', options.idleTimeoutMs, 45_000)),
  };
}

/**
 * `baseUrl` as an absolute URL. In a browser (or a worker) it may be relative to the page, resolved
 * as the page's fetch would resolve it: '' is the page's origin, '/tray' a path on it. Anywhere
 * else, or when it is no URL at all, a mistake would show only as every connection failing,
 * retried for ever without a word: it is thrown instead.
 */
function absoluteBase(baseUrl: string): string {
  // The joined form, as requests are made: '' + '/' names the origin's root, not the page.
  const root = `${baseUrl.replace(/\/+$/, '')}/`;
  const page = (globalThis as { location?: { href?: unknown } }).location?.href;
  const against = typeof page === 'string' ? page : undefined;
  const resolved = URL.canParse(root, against) ? new URL(root, against) : undefined;
  // A query or a fragment: the stream's path is joined after it, and would miss the service.
  if (resolved === undefined || !/^https?:$/.test(resolved.protocol) || /[?#]/.test(baseUrl))
    throw new TypeError(
      `openTrayStream: baseUrl must be an http(s) URL without a query or fragment (in a browser, it may be relative to the page), got ${JSON.stringify(baseUrl)}`,
    );
  return resolved.href.replace(/\/+$/, '');
}

function positive(name: string, given: unknown, fallback: number): number {
  const value = given ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`openTrayStream: ${name} must be a finite number above 0, got ${String(value)}`);
  return value;
}

function timer(name: string, value: number): number {
  if (value > MAX_TIMER_MS)
    throw new TypeError(
      `openTrayStream: ${name} must be at most ${MAX_TIMER_MS} (a timer’s longest), got ${value}`,
    );
  return value;
}

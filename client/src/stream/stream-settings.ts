import { defaultReconnectPolicy, type ReconnectPolicy } from './reconnect-delay.ts';
import { absoluteBase } from '../base-url.ts';

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
    base: absoluteBase(options.baseUrl, 'openTrayStream'),
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

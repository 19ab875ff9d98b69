import { JITTER } from '../request/retry-delay.ts';

/**
 * How long a stream waits before it reconnects: doubling from `initialMs`, capped at `maxMs`, which
 * caps a wait the service names too.
 */
export interface ReconnectPolicy {
  initialMs: number;
  maxMs: number;
}

export const defaultReconnectPolicy: ReconnectPolicy = { initialMs: 1_000, maxMs: 30_000 };

/**
 * The wait before reconnect number `attempt` (0 for the first after a stream was open): a random
 * point in the upper half of the doubled step, so that clients dropped together by one restart
 * do not all come back in the same instant, and none comes back at once.
 */
export function reconnectDelay(attempt: number, policy: ReconnectPolicy, random = Math.random): number {
  const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
  return step / 2 + (random() * step) / 2;
}

/**
 * The wait before reconnect number `attempt` when the service may have named one (`Retry-After`,
 * `retry:`). Never shorter than the backoff's: a wait of nothing (`Retry-After: 0`, a date past,
 * `retry: 0`) would otherwise bring the stream back at once, over and over. Up to a fifth longer
 * than the named one at random (as calls' retries are), so clients told the same wait do not come
 * back in the same instant. Never longer than `maxMs`: a `Retry-After` of a month (a proxy's, a
 * misconfiguration) would otherwise stop the stream for good without telling the app. Where the cap
 * cuts it, the random part goes below `maxMs` instead (never below the named wait when that is
 * shorter than `maxMs`): every client told `Retry-After: 120` by one proxy would otherwise come
 * back at exactly `maxMs`, together, round after round.
 */
export function reconnectWait(
  attempt: number,
  policy: ReconnectPolicy,
  namedMs: number | undefined,
  random = Math.random,
): number {
  const backoff = reconnectDelay(attempt, policy, random);
  if (namedMs === undefined) return backoff;
  const share = random();
  const wanted = Math.max(backoff, namedMs + namedMs * JITTER * share);
  if (wanted <= policy.maxMs) return wanted;
  const floor = namedMs < policy.maxMs ? Math.max(backoff, namedMs) : policy.maxMs * (1 - JITTER);
  return Math.max(floor, policy.maxMs - policy.maxMs * JITTER * share);
}

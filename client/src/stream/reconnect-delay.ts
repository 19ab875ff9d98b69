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

import { createRedis } from '../../shared/redis/create-redis.ts';
import { REDIS_CALL_BUDGET_MS } from '../../shared/redis/hung-redis-breaker.ts';
import { CALLS_IN_FLIGHT } from '../../tray-service/live/in-flight-batches.ts';
import { renewLeases } from '../../tray-service/live/renew-leases.ts';
import { createStreamSlots } from '../../tray-service/live/stream-slots.ts';

const ROUNDS = 3;

/** After failures (a tripped breaker): waits for the connection to be made again and answer. */
const pastBreaker = (failed: number) => new Promise((resolve) => setTimeout(resolve, failed > 0 ? 6_000 : 0));
/** Leases taken at once while seeding: one instance's openings never come all together. */
const SEED_BATCH = 1_000;

/**
 * What one instance's heartbeat asks of Redis: it renews every open stream's lease (stream-hub.ts,
 * renewLeases: CALLS_IN_FLIGHT at a time). For each count, that many leases in Redis, renewed
 * that way three times, then once all at once (as heartbeats did before): how long a round took
 * and how many renewals failed (one past the Redis call budget fails, and trips the breaker every
 * other call of the connection shares). Baseline: as many bare ZADDs, the lease's own write, sent
 * together. `failed`: renewals the heartbeat's own way lost in any round (the all-at-once
 * comparison is expected to lose some past a count), which fails the bench.
 */
export async function leaseRenewalScenario(
  redisUrl: string,
  prefix: string,
  counts: readonly number[],
): Promise<{ lines: string[]; failed: number }> {
  const lines: string[] = [];
  let failedInRounds = 0;
  for (const count of counts) {
    // A client of its own per count: a breaker a count trips stays with it.
    const redis = createRedis(redisUrl);
    const keyPrefix = `${prefix}-renewals-${count}`;
    const slots = createStreamSlots(redis, { prefix: keyPrefix, limit: 5, leaseMs: 60_000 });
    try {
      for (let start = 0; start < count; start += SEED_BATCH) {
        const batch = Array.from({ length: Math.min(SEED_BATCH, count - start) }, (_, i) => start + i);
        await Promise.all(batch.map((i) => slots.acquire(`u${i}`, `s${i}`)));
      }
      const leases = Array.from({ length: count }, (_, i) => ({ userId: `u${i}`, streamId: `s${i}` }));
      const rounds: { ms: number; failed: number }[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const started = performance.now();
        const failed = await renewLeases(slots, leases, () => undefined);
        rounds.push({ ms: performance.now() - started, failed });
        failedInRounds += failed;
        await pastBreaker(failed);
      }
      const allStarted = performance.now();
      let allFailed = 0;
      await Promise.all(
        leases.map((lease) =>
          slots.renew(lease.userId, lease.streamId).catch(() => {
            allFailed += 1;
          }),
        ),
      );
      const allMs = performance.now() - allStarted;
      await pastBreaker(allFailed);
      const baseline = performance.now();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          redis.zadd(`${keyPrefix}:baseline:u${i}`, Date.now(), `s${i}`),
        ),
      );
      const baselineMs = performance.now() - baseline;
      const spans = rounds.map((one) => one.ms);
      lines.push(
        `renewals: ${count} leases, ${CALLS_IN_FLIGHT} in flight, ${ROUNDS} rounds: ${(Math.min(...spans) / 1000).toFixed(2)}-` +
          `${(Math.max(...spans) / 1000).toFixed(2)} s a round, failed ${rounds.map((one) => one.failed).join(', ')};` +
          ` all at once: ${(allMs / 1000).toFixed(2)} s, failed ${allFailed} (a call's budget: ${REDIS_CALL_BUDGET_MS / 1000} s);` +
          ` baseline ${count} bare ZADDs at once ${(baselineMs / 1000).toFixed(2)} s`,
      );
    } finally {
      redis.disconnect();
    }
  }
  return { lines, failed: failedInRounds };
}

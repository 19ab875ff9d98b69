import { ReplyError } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import { redisErrorCode } from './redis-failure.ts';

/**
 * A one-key script that writes its key for a minute: a write made the way the queue's are (bull
 * and the receiver's enqueue run scripts), so an ACL user that may write keys but not run scripts
 * (NOPERM) is caught as surely as a replica (READONLY) or a Redis at maxmemory under noeviction (OOM).
 */
const WRITE_PROBE = "return redis.call('SET', KEYS[1], '1', 'PX', 60000)";

/** Writes `key` by script; rejects as Redis answered (a ReplyError when it refused). */
export function probeWrite(redis: RedisClient, key: string): Promise<unknown> {
  return redis.eval(WRITE_PROBE, 1, key);
}

/** What a readiness check reports (the shape of shared/http's CheckResult). */
export type WritesCheck = { ok: true } | { ok: false; error: string; detail: { refused: string } };

/**
 * For /readyz: Redis answers and takes a write. A PING alone passes on a server that refuses every
 * write, while the queue, rate limits and streams all need writes. A refusal is reported by its
 * code word only (READONLY, OOM, NOPERM), never its text, which may carry arguments; no answer at
 * all rejects, as a failed PING would.
 */
export async function redisTakesWrites(redis: RedisClient, key: string): Promise<WritesCheck> {
  try {
    await probeWrite(redis, key);
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ReplyError)) throw error;
    const refused = redisErrorCode(error);
    return { ok: false, error: `Redis refuses writes: ${refused}`, detail: { refused } };
  }
}

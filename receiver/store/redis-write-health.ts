import { Cluster, ReplyError } from 'ioredis';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { pingRedis } from '../../shared/redis/create-redis.ts';
import { redisErrorCode } from '../../shared/redis/redis-failure.ts';
import { probeWrite } from '../../shared/redis/redis-takes-writes.ts';

/** What the readiness check reports; the shape of shared/http's CheckResult. */
export type WriteHealthResult = { ok: true } | { ok: false; error: string; detail: Record<string, unknown> };

export interface RedisWriteHealth {
  /** Records how a write to Redis ended (an enqueue or a drain) and passes it on unchanged. */
  observe<T>(write: Promise<T>): Promise<T>;
  /**
   * The code word (OOM, READONLY, NOPERM) Redis refused the last write with, when a small probe
   * write is refused too; undefined when the last write went through or the probe does now.
   */
  refusal(): Promise<string | undefined>;
  /** For /readyz: Redis answers, is a primary, and takes writes. */
  check(): Promise<WriteHealthResult>;
}

/**
 * Whether Redis takes the receiver's writes, for /readyz. A PING alone says nothing of it: a
 * primary demoted to a replica (READONLY) and one at maxmemory under noeviction (OOM) both answer
 * it, while every event goes to the spool and the spool grows until the disk is full. So the check
 * also asks the server's ROLE (a single server; on a cluster a replica answers MOVED, which ioredis
 * follows), and reports the reply error the last write failed with, until a write succeeds again.
 * While that is so, the check itself tries a small write (a key of `markPrefix` expiring in a
 * minute), so readiness comes back once Redis takes writes even when no event is left to retry.
 * The write is made by a script, as every enqueue and drain is: a user whose ACL allows plain
 * writes but not scripts (NOPERM) must not read as ready while no event can be queued.
 * Only the error's code word (READONLY, OOM) is published, never its text, which may carry
 * arguments.
 */
export function createRedisWriteHealth(redis: RedisClient, markPrefix: string): RedisWriteHealth {
  let refused: string | undefined;
  const observe = <T>(write: Promise<T>): Promise<T> =>
    write.then(
      (value) => {
        refused = undefined;
        return value;
      },
      (error: unknown) => {
        // Only an answer of Redis's: a timeout or a lost connection says nothing about writes.
        if (error instanceof ReplyError) refused = redisErrorCode(error);
        throw error;
      },
    );
  const refusal = async (): Promise<string | undefined> => {
    if (refused !== undefined)
      await observe(probeWrite(redis, `${markPrefix}:receiver-write-probe`)).catch(() => undefined);
    return refused;
  };
  return {
    observe,
    refusal,
    async check() {
      // The last write's refusal first: while a demoted server's READONLY keeps dropping the
      // connection, a PING may find it closed, which would hide the reason.
      const code = await refusal();
      if (code !== undefined)
        return { ok: false, error: `Redis refuses writes: ${code}`, detail: { refused: code } };
      await pingRedis(redis);
      if (!(redis instanceof Cluster)) {
        const role = await roleOf(redis);
        if (role !== undefined && role !== 'master') {
          return {
            ok: false,
            error: `Redis is a ${role}: it refuses writes`,
            detail: { role, refused: 'READONLY' },
          };
        }
      }
      return { ok: true };
    },
  };
}

/** ROLE's first word (master, slave); undefined where a managed Redis does not offer ROLE. */
async function roleOf(redis: RedisClient): Promise<string | undefined> {
  try {
    const answer = (await redis.call('ROLE')) as unknown;
    return Array.isArray(answer) && typeof answer[0] === 'string' ? answer[0] : undefined;
  } catch (error) {
    if (error instanceof ReplyError) return undefined;
    throw error;
  }
}

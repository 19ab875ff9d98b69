import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { DAY_MS } from '../../shared/time/durations.ts';
import type { ReplayProgress, ReplayProgressStore } from '../use-cases/replay-events.ts';

/**
 * Replays' progress in Redis, so any admin instance answers GET /admin/replays/:id whichever one
 * runs the replay; kept a day after its last update. A Redis that hangs fails each call within the
 * budget, as an unreachable one does (503): a replay's start and end save while it holds one of
 * REPLAY_MAX_RUNNING slots, which would otherwise stay taken for as long as Redis hung.
 */
export function createRedisReplayProgress(redis: RedisClient, prefix: string): ReplayProgressStore {
  const keyOf = (id: string) => `${prefix}:replay:${id}`;
  const guarded = guardedRedis(redis);
  return {
    async save(progress) {
      await guarded(() => redis.set(keyOf(progress.id), JSON.stringify(progress), 'PX', DAY_MS));
    },
    async get(id) {
      const raw = await guarded(() => redis.get(keyOf(id)));
      if (raw === null) return undefined;
      const stored = JSON.parse(raw) as Record<string, unknown> & { filter: Record<string, unknown> };
      const date = (value: unknown) => (typeof value === 'string' ? new Date(value) : undefined);
      const filter = { ...stored.filter };
      for (const field of ['since', 'until'])
        if (typeof filter[field] === 'string') filter[field] = date(filter[field]);
      return {
        ...(stored as unknown as ReplayProgress),
        // Saved by a release that had no such count.
        expired: typeof stored.expired === 'number' ? stored.expired : 0,
        filter: filter as ReplayProgress['filter'],
        startedAt: date(stored.startedAt) ?? new Date(0),
        updatedAt: date(stored.updatedAt) ?? new Date(0),
        ...(stored.finishedAt === undefined ? {} : { finishedAt: date(stored.finishedAt) ?? new Date(0) }),
      };
    },
  };
}

import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { changeChannel, shardOf } from './change-channels.ts';
import type { TrayChanges } from '../use-cases/tray-changes.ts';
import { changesOf, marksChanges, removalsOf, type LiveChange } from './live-change.ts';

/** The live streams' side of the use cases' announcements. */
export type ChangePublisher = TrayChanges;

/** Publishes live changes to the instances holding their users' streams. */
export type AnnounceChanges = (changes: readonly LiveChange[]) => Promise<void>;

/**
 * Publishes changes on the users' shard channels, one PUBLISH per shard touched. Pub/sub delivers
 * at most once: a failed publish is logged and not retried, because the change is already stored
 * and a stream that misses it catches up from the database when it reconnects (or when its
 * instance's subscription comes back). So a Redis outage never fails a job or an API call here.
 */
export function createChangeAnnouncer(redis: RedisClient, prefix: string, logger: Logger): AnnounceChanges {
  return async function publish(changes) {
    const byShard = new Map<number, LiveChange[]>();
    for (const change of changes) {
      const shard = shardOf(change.userId);
      const list = byShard.get(shard);
      if (list) list.push(change);
      else byShard.set(shard, [change]);
    }
    await Promise.all(
      [...byShard].map(([shard, list]) =>
        redis.publish(changeChannel(prefix, shard), JSON.stringify(list)).catch((error: unknown) => {
          logger.warn({ err: (error as Error).message, shard }, 'live change not published');
        }),
      ),
    );
  };
}

/** The tray changes of the use cases, announced to the live streams (createChangeAnnouncer). */
export function createChangePublisher(redis: RedisClient, prefix: string, logger: Logger): ChangePublisher {
  const publish = createChangeAnnouncer(redis, prefix, logger);
  return {
    recordsWritten: (records) => publish(changesOf('record', records)),
    recordsRemoved: (records) => publish(removalsOf(records)),
    markedRead: (records) => publish(marksChanges({ kind: 'read' }, records)),
    inboxMarked(mark, records) {
      switch (mark.kind) {
        case 'seen':
          return publish(marksChanges({ kind: 'seen' }, records));
        case 'archive':
          return publish(marksChanges({ kind: 'archived' }, records));
        case 'snooze':
          return publish(marksChanges({ kind: 'snoozed', until: mark.until }, records));
        case 'unarchive':
        case 'unsnooze':
          // Back in the inbox: the whole record, with its inbox state, as v3 history shows it.
          return publish(changesOf('record', records));
      }
    },
    cleared: (userId, at) => publish([{ kind: 'cleared', userId, at }]),
    lastRead: (userId) => publish([{ kind: 'last-read', userId }]),
  };
}

import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import { serializeStoredEvent, storedEventsChannel } from './stored-events-channel.ts';

/**
 * The worker's side of the live tail: publishes each event once first applied. Pub/sub delivers at
 * most once, and the event is stored already (the console's list shows it): a failed publish is
 * logged, never retried, and never fails the job.
 */
export function createEventAnnouncer(
  redis: RedisClient,
  prefix: string,
  logger: Logger,
): (event: StoredEvent) => Promise<void> {
  const channel = storedEventsChannel(prefix);
  return async (event) => {
    try {
      await redis.publish(channel, serializeStoredEvent(event));
    } catch (error) {
      logger.warn({ err: (error as Error).message, key: event.key }, 'stored event not announced');
    }
  };
}

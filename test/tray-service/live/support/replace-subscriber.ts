import { changeChannel, shardOf } from '../../../../tray-service/live/change-channels.ts';
import type { RedisClient } from '../../../../shared/redis/create-redis.ts';
import { waitFor } from '../../../support/wait-for.ts';

/**
 * Drops the instance's subscriber connection (CLIENT KILL through `probe`, a connection of the
 * test's own) and waits until it is back and subscribed to `userId`'s channel again: every stream
 * is then owed a resync. `whileDown` runs once the kill is sent, before the reconnect can finish.
 */
export async function replaceSubscriber(
  probe: RedisClient,
  subscriber: RedisClient,
  userId: string,
  whileDown: () => Promise<unknown> = async () => undefined,
): Promise<void> {
  await probe.client('KILL', 'TYPE', 'pubsub');
  await whileDown();
  await waitFor(() => subscriber.status !== 'ready', 5_000, 'the subscriber to drop');
  await waitFor(() => subscriber.status === 'ready', 10_000, 'the subscriber to come back');
  // Subscribed again: what is published from now on reaches the instance.
  const channel = changeChannel('live', shardOf(userId));
  const subscribed = async () => Number(((await probe.pubsub('NUMSUB', channel)) as [string, number])[1]) > 0;
  await waitFor(subscribed, 5_000, 'the subscription');
}

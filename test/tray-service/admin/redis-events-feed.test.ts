import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { createRedisEventsFeed } from '../../../tray-service/admin/redis-events-feed.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('createRedisEventsFeed (real Redis)', () => {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const made: RedisClient[] = [];
  const connect = () => {
    const connection = createRedis(testStack().redisUrl);
    made.push(connection);
    return connection;
  };
  afterEach(() => {
    for (const connection of made.splice(0)) connection.disconnect();
  });

  it('ends the tails open at its close, and closes its connection', async () => {
    const feed = createRedisEventsFeed({ connect, prefix: uniqueName('feed'), logger });
    let ended = 0;
    await feed.subscribe({ event: () => undefined, end: () => (ended += 1) });
    expect(made).to.have.lengthOf(1);
    await feed.close();
    expect(ended).to.equal(1);
    await waitFor(async () => made[0]!.status === 'end', 2_000, 'the connection closed');
  });

  // A tail being authorised when the shutdown began subscribed after the close: it opened a new
  // subscriber connection, never closed, and held the admin listener's drain for its whole grace.
  it('ends a tail that subscribes after its close at once, without a connection', async () => {
    const feed = createRedisEventsFeed({ connect, prefix: uniqueName('feed'), logger });
    await feed.close();
    let ended = 0;
    const stop = await feed.subscribe({ event: () => undefined, end: () => (ended += 1) });
    stop();
    expect(ended).to.equal(1);
    expect(made).to.have.lengthOf(0);
    expect(feed.listeners).to.equal(0);
  });
});

import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { CALLS_IN_FLIGHT } from '../../../tray-service/live/in-flight-batches.ts';
import { createLostChanges, type LostChanges } from '../../../tray-service/live/lost-changes.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A Redis outage of a few seconds while workers fan out to large communities leaves tens of
// thousands of users owed a resync. Their lost changes were stored all at once on one connection:
// past about 20,000 the later calls waited beyond a Redis call's budget, the whole resync failed
// and was owed again, the same size, for as long as the process lived, and no open stream caught
// up. A batch of CALLS_IN_FLIGHT at a time keeps each call within it whatever the count.
describe('a resync owed to many users at once', function () {
  this.timeout(60_000);

  it('stores every user’s lost changes, at most CALLS_IN_FLIGHT calls at once', async () => {
    const prefix = uniqueName('many-owed');
    const redis = createRedis(testStack().redisUrl);
    redis.on('error', () => undefined);
    const reader = createRedis(testStack().redisUrl);
    const stored = createLostChanges(reader, prefix);
    let inFlight = 0;
    let most = 0;
    const counting: LostChanges = {
      of: (userId) => stored.of(userId),
      record: async (userId, since, at) => {
        most = Math.max(most, (inFlight += 1));
        try {
          await stored.record(userId, since, at);
        } finally {
          inFlight -= 1;
        }
      },
    };
    try {
      const publisher = createChangePublisher(redis, prefix, silent, { retryMs: 100, lost: counting });
      const users = Array.from({ length: CALLS_IN_FLIGHT * 2 + 500 }, (_, i) => `u-owed-${i}`);
      redis.disconnect();
      const at = Date.now();
      for (const user of users) await publisher.cleared(user, at);
      await redis.connect();
      const found = async () =>
        (await Promise.all(users.map((user) => stored.of(user)))).filter((lost) => lost.length > 0).length;
      await waitFor(async () => (await found()) === users.length, 30_000, 'every user’s lost changes');
      expect(most).to.equal(CALLS_IN_FLIGHT);
    } finally {
      redis.disconnect();
      reader.disconnect();
    }
  });
});

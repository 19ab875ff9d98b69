import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { bearer, expiringToken } from '../api/support/api-harness.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';

const STREAM = '/notifications/v3/stream';

// At STREAMS_PER_USER a new stream takes the oldest's place. A token that expired while the new
// stream was being authorised (its Redis calls slow: here Redis holds every write for 3 s) ended
// the new stream at once with `expired`, after it had already ended the oldest, another tab's
// healthy stream, with `replaced`: for a stream that never lived.
describe('a stream whose token expires while it is being authorised', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const live = useLiveOnOwnRedis('live-expiry-authorising', () => suite.storage, undefined, {
    streamsPerUser: 1,
  });

  it('ends with `expired` and leaves the stream whose place it would have taken', async () => {
    const user = 'u-expiring-late';
    const base = `${live.instance.base}${STREAM}`;
    const held = await openSse(base, { Authorization: await bearer(user) });
    try {
      await held.next(named('unread'));
      const pauser = createRedis(live.redisServer.url);
      try {
        // Every write waits 3 s: the slot, the rate limit. The token has 1-2 s left.
        await pauser.call('CLIENT', 'PAUSE', '3000', 'WRITE');
        const late = await openSse(base, { Authorization: `Bearer ${await expiringToken(user, 2)}` });
        const ended = await late.next(named('expired'), { timeoutMs: 10_000 });
        expect(JSON.parse(ended.data)).to.deep.equal({ reason: 'token-expired', reconnect: true });
        await late.ended;
      } finally {
        await pauser.quit();
      }
      // The held stream goes on: nothing ended it, and it still gets what the user is told.
      expect(held.events.map((event) => event.event)).to.not.include('replaced');
      expect(live.instance.live.hub.size).to.equal(1);
    } finally {
      held.close();
    }
  });
});

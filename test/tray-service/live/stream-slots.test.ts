import { expect } from 'chai';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { REDIS_CALL_BUDGET_MS } from '../../../shared/redis/hung-redis-breaker.ts';
import { isRedisUnavailable } from '../../../shared/redis/redis-failure.ts';
import { createStreamSlots, newStreamId } from '../../../tray-service/live/stream-slots.ts';
import { failureOf, useHungRedis } from '../../support/hung-redis.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { waitFor } from '../../support/wait-for.ts';
import { dropConnection } from '../../../shared/redis/drop-connection.ts';
import { testStack } from '../../support/test-stack.ts';

describe('live/stream-slots', () => {
  it('counts a stream again once its heartbeat renews a lease that lapsed while it stayed open (Redis unreachable for longer than the lease)', async () => {
    const redis = createRedis(testStack().redisUrl);
    const slots = createStreamSlots(redis, { prefix: uniqueName('slots'), limit: 2, leaseMs: 200 });
    try {
      expect(await slots.acquire('u', 'open-1')).to.deep.equal([]);
      expect(await slots.acquire('u', 'open-2')).to.deep.equal([]);
      // No renewal reached Redis for longer than the lease; then the heartbeats renew both.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await slots.renew('u', 'open-1')).to.equal(true);
      expect(await slots.renew('u', 'open-2')).to.equal(true);
      expect(await slots.acquire('u', 'open-3'), 'a third while two are open and renewing').to.deep.equal([
        'open-1',
      ]);
      await slots.release('u', 'open-2');
      expect(await slots.acquire('u', 'open-4'), 'a fourth once one of them closed').to.deep.equal([]);
    } finally {
      redis.disconnect();
    }
  });

  // ioredis sends a command again when its connection dropped before the answer came
  // (autoResendUnfulfilledCommands): the script may then run twice, with the same arguments.
  it('takes one place for a stream however often its acquire runs, replacing no further stream', async () => {
    const redis = createRedis(testStack().redisUrl);
    const at = Date.now();
    const slots = createStreamSlots(redis, {
      prefix: uniqueName('slots'),
      limit: 2,
      leaseMs: 5_000,
      now: () => at,
    });
    try {
      const [first, second, third] = [1, 2, 3].map((n) => newStreamId(at - 10_000 + n));
      await slots.acquire('u', first ?? '');
      await slots.acquire('u', second ?? '');
      expect(await slots.acquire('u', third ?? '')).to.deep.equal([first]);
      expect(await slots.acquire('u', third ?? ''), 'the same acquire again').to.deep.equal([first]);
      expect(await slots.renew('u', second ?? ''), 'the second stream keeps its place').to.equal(true);
      expect(await slots.renew('u', first ?? '')).to.equal(false);
    } finally {
      redis.disconnect();
    }
  });

  it('gives streams back the places a stream that never opened took, but not to one since gone', async () => {
    const redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    const slots = createStreamSlots(redis, { prefix, limit: 2, leaseMs: 5_000 });
    try {
      const [first, second, never, closed, next] = [1, 2, 3, 4, 5].map((at) => newStreamId(at * 1_000));
      await slots.acquire('u', first ?? '');
      await slots.acquire('u', second ?? '');
      expect(await slots.acquire('u', never ?? '', second)).to.deep.equal([second]);
      // The stream that took second's place never opened: its own goes, second gets its back.
      await slots.restore('u', never ?? '', [second ?? '']);
      expect(await slots.renew('u', second ?? '')).to.equal(true);
      expect(await slots.renew('u', first ?? '')).to.equal(true);
      // Its holder closed it in between: a place given back to nobody would count for ever.
      const gone = newStreamId(4_500);
      expect(await slots.acquire('u', gone)).to.deep.equal([first]);
      await slots.release('u', first ?? '');
      await slots.restore('u', gone, [first ?? '']);
      expect(await redis.zrange(`${prefix}:streams:u`, 0, -1)).to.deep.equal([second]);
      expect(await slots.acquire('u', closed ?? '')).to.deep.equal([]);
      // And both count: the next stream takes the oldest's place.
      expect(await slots.acquire('u', next ?? '')).to.deep.equal([second]);
    } finally {
      redis.disconnect();
    }
  });

  it("at the limit, gives a new stream the place of the user's oldest, whose renewal then says so, on any instance", async () => {
    const redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    const options = { prefix, limit: 2, leaseMs: 5_000 };
    // Two instances: the slots are the user's, wherever the streams are.
    const [one, two] = [createStreamSlots(redis, options), createStreamSlots(redis, options)];
    try {
      const [first, second, third, fourth] = [1_000, 2_000, 3_000, 4_000].map((at) => newStreamId(at));
      expect([first, second, third, fourth]).to.deep.equal([first, second, third, fourth].sort());
      // Opened out of order: the oldest is the one opened first, not the one acquired first.
      expect(await one.acquire('u', second ?? '')).to.deep.equal([]);
      expect(await two.acquire('u', first ?? '')).to.deep.equal([]);
      expect(await one.acquire('v', third ?? ''), 'another user').to.deep.equal([]);
      expect(await two.acquire('u', third ?? '')).to.deep.equal([first]);
      // The replaced stream's holder learns it at its next heartbeat, if no one told it before,
      // and its renewal does not take the slot back; the others renew as before.
      expect(await one.renew('u', first ?? '')).to.equal(false);
      expect(await two.renew('u', second ?? '')).to.equal(true);
      expect(await one.renew('u', third ?? '')).to.equal(true);
      expect(await one.acquire('u', fourth ?? '')).to.deep.equal([second]);
      expect(await one.renew('u', first ?? ''), 'still replaced').to.equal(false);
      // Closing, a replaced stream releases its slot like any other.
      await one.release('u', first ?? '');
      await one.release('u', second ?? '');
      expect(await redis.zcard(`${prefix}:streams:u`)).to.equal(2);
    } finally {
      redis.disconnect();
    }
  });

  it('gives the place of as many as it takes when the limit was lowered', async () => {
    const redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    try {
      const before = createStreamSlots(redis, { prefix, limit: 3, leaseMs: 5_000 });
      const ids = [1, 2, 3, 4].map((at) => newStreamId(at));
      for (const id of ids.slice(0, 3)) expect(await before.acquire('u', id)).to.deep.equal([]);
      const after = createStreamSlots(redis, { prefix, limit: 1, leaseMs: 5_000 });
      expect(await after.acquire('u', ids[3] ?? '')).to.deep.equal(ids.slice(0, 3));
    } finally {
      redis.disconnect();
    }
  });
  it('gives first the place of the stream a reconnect names (its client’s previous one), at any count, only if the user still holds it', async () => {
    const redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    const options = { prefix, limit: 2, leaseMs: 5_000 };
    const [one, two] = [createStreamSlots(redis, options), createStreamSlots(redis, options)];
    try {
      const [healthy, dead, reconnect, another, sixth, seventh, eighth] = [1, 2, 3, 4, 6, 7, 8].map((at) =>
        newStreamId(at * 1_000),
      ) as [string, string, string, string, string, string, string];
      expect(await one.acquire('u', healthy)).to.deep.equal([]);
      expect(await two.acquire('u', dead)).to.deep.equal([]);
      // At the limit: the named stream, not the oldest.
      expect(await one.acquire('u', reconnect, dead)).to.deep.equal([dead]);
      expect(await two.renew('u', dead)).to.equal(false);
      expect(await one.renew('u', healthy)).to.equal(true);
      // Below the limit too: the client reads its previous stream no more, which would otherwise
      // keep its place until TCP gives up, and later push out a healthy one in its stead.
      await one.release('u', healthy);
      expect(await one.acquire('u', another, reconnect)).to.deep.equal([reconnect]);
      expect(await redis.zcount(`${prefix}:streams:u`, '(0', '+inf')).to.equal(1);
      // One already replaced, another user's, or unknown: at the limit the oldest, as without one.
      expect(await one.acquire('u', sixth, reconnect), 'already replaced').to.deep.equal([]);
      expect(await one.acquire('v', healthy)).to.deep.equal([]);
      expect(await one.acquire('u', seventh, healthy), 'v’s stream').to.deep.equal([another]);
      expect(await one.renew('v', healthy)).to.equal(true);
      expect(await one.acquire('u', eighth, newStreamId(9_000)), 'unknown').to.deep.equal([sixth]);
    } finally {
      redis.disconnect();
    }
  });
});

/**
 * Runs `acquire` (of the stream `lost`, in the user's set `key`) with its answer lost: once its
 * script ran (`meanwhile` then), the connection is dropped, and this returns when the acquire has
 * failed and its undo gave the lost stream's place back.
 */
async function acquireAnswerLost(
  on: { redis: RedisClient; loseReplies: () => void; admin: RedisClient; key: string; lost: string },
  acquire: () => Promise<unknown>,
  meanwhile: () => Promise<void> = async () => undefined,
): Promise<void> {
  on.loseReplies();
  const acquiring = acquire();
  await waitFor(async () => (await on.admin.zscore(on.key, on.lost)) !== null, 5_000, 'the script to run');
  await meanwhile();
  dropConnection(on.redis);
  await failureOf(acquiring);
  await waitFor(
    async () => (await on.admin.zscore(on.key, on.lost)) === null,
    5_000,
    "the lost stream's place given back",
  );
}

// A Redis that hangs with its connection open: a stream's opening waited on it for as long as it
// hung, and each open stream's heartbeat sent one more renewal every interval.
describe('live/stream-slots while Redis hangs', function () {
  this.timeout(20_000);
  const hung = useHungRedis();

  // An acquire is not given the budget: a script given up on would still run, holding a place
  // for a stream that never opened.
  it('fails a renewal and a release within the budget, as Redis unavailable', async () => {
    const { redis, hang } = hung();
    const slots = createStreamSlots(redis, { prefix: uniqueName('slots'), limit: 2, leaseMs: 5_000 });
    const stream = newStreamId(Date.now());
    await slots.acquire('u-hung', stream);
    hang();
    for (const call of [slots.renew('u-hung', stream), slots.release('u-hung', stream)]) {
      const { error, ms } = await failureOf(call);
      expect(isRedisUnavailable(error), String(error)).to.equal(true);
      expect(ms).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    }
  });

  // The hung-Redis breaker drops a connection that stopped answering, failing what it held: an
  // acquire whose script had run, its answer lost, left the new stream's lease standing and the
  // user's oldest stream marked, which then ended at its next renewal as "open elsewhere", though
  // no newer stream was open anywhere.
  it('gives back the places an acquire took when its answer was lost with its connection', async () => {
    const { redis, loseReplies } = hung();
    const admin = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    const key = `${prefix}:streams:u-lost`;
    const slots = createStreamSlots(redis, { prefix, limit: 1, leaseMs: 5_000 });
    const [oldest, lost] = [newStreamId(Date.now() - 1_000), newStreamId(Date.now())];
    try {
      await slots.acquire('u-lost', oldest);
      await acquireAnswerLost(
        { redis, loseReplies, admin, key, lost },
        () => slots.acquire('u-lost', lost),
        async () => {
          expect(Number(await admin.zscore(key, oldest)), 'the oldest marked replaced').to.be.below(0);
        },
      );
      expect(Number(await admin.zscore(key, oldest)), 'the oldest no longer marked').to.be.above(0);
      expect(await slots.renew('u-lost', oldest)).to.equal(true);
    } finally {
      admin.disconnect();
    }
  });

  // A mark was the score -(opening + lease): two acquires of one user in one millisecond (two tabs
  // reconnecting at once) marked with the same, and the undo of one gave a place back to the
  // streams the other replaced, which then outlived their replacement.
  it('gives back only the places of the acquire whose answer was lost, not those another acquire of the same millisecond took', async () => {
    const { redis, loseReplies } = hung();
    const admin = createRedis(testStack().redisUrl);
    const prefix = uniqueName('slots');
    const key = `${prefix}:streams:u-twice`;
    const at = Date.now();
    const options = { prefix, limit: 1, leaseMs: 5_000, now: () => at };
    const other = createStreamSlots(admin, options);
    const slots = createStreamSlots(redis, options);
    const [replaced, second, lost] = [1, 2, 3].map((n) => newStreamId(at - 10 + n)) as [
      string,
      string,
      string,
    ];
    try {
      await other.acquire('u-twice', replaced);
      expect(await other.acquire('u-twice', second)).to.deep.equal([replaced]);
      await acquireAnswerLost({ redis, loseReplies, admin, key, lost }, () => slots.acquire('u-twice', lost));
      expect(await other.renew('u-twice', second), 'the stream the lost acquire replaced').to.equal(true);
      expect(await other.renew('u-twice', replaced), 'the stream the other acquire replaced').to.equal(false);
    } finally {
      admin.disconnect();
    }
  });
});

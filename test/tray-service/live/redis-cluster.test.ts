import { expect } from 'chai';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { createRemovalLog } from '../../../tray-service/live/removal-log.ts';
import { applyJob } from '../../../tray-service/use-cases/apply-job.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { startLiveInstance, type StartedLiveInstance } from './support/start-live-instance.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

describe('live tray on a Redis Cluster (ioredis Cluster client)', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const local = useRedisCluster('live-cluster');
  const { connect } = local;
  let bans: BanCache | undefined;
  let instance: StartedLiveInstance | undefined;
  let base: string;
  local.atTeardown(async () => {
    await instance?.close();
    bans?.stop();
  });

  before(async () => {
    const redis = connect();
    bans = await startBanCache(redis, { prefix: '{bans}', refreshMs: 200, logger: silent });
    instance = await startLiveInstance({
      storage: suite.storage,
      redis,
      subscriber: connect(),
      bans,
      streamsPerUser: 1,
    });
    base = instance.base;
  });

  it('opens a stream with a ticket, gives its place to the next at the stream limit and delivers a published record', async () => {
    const user = 'u-cluster';
    const issued = await request(base)
      .post('/notifications/v3/stream-ticket')
      .set('Authorization', await bearer(user));
    expect(issued.status).to.equal(201);
    const stream = await openSse(
      `${base}/notifications/v3/stream?ticket=${issued.body.data.ticket as string}`,
    );
    expect(stream.status).to.equal(200);
    await stream.next(named('unread'));
    const next = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(user) });
    expect(next.status).to.equal(200);
    await stream.next(named('replaced'));
    await stream.ended;
    await next.next(named('unread'));

    const publisher = createChangePublisher(connect(), 'live', silent);
    await applyJob(
      jobDataOf(commentEvent({ postId: 'p-cl', postOwner: user, author: 'u-cid', createdAt: minute(1) })),
      {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: 90,
        networkId: 'default',
        onWritten: publisher.recordsWritten,
      },
    );
    const record = await next.next(named('record'));
    expect(dataOf<NotificationRecord>(record).targetId).to.equal('p-cl');
    next.close();
  });

  it('catches an open stream up on what was published while its subscription was being replaced', async () => {
    const user = 'u-cl-kill';
    const stream = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(user) });
    await stream.next(named('unread'));
    const publisher = createChangePublisher(connect(), 'live', silent);
    const posts: string[] = [];
    for (let n = 1; n <= 30; n += 1) {
      if (n === 10) {
        // The subscription's connection is closed under it (a node restarting, a proxy, a
        // CLIENT KILL): ioredis's cluster client opens another on some node and subscribes
        // again, and whatever was published in between reached nobody.
        for (const node of local.cluster.nodes) {
          const admin = new Redis({ host: '127.0.0.1', port: node.port });
          await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
          admin.disconnect();
        }
      }
      const postId = `p-kill-${n}`;
      posts.push(postId);
      await applyJob(
        jobDataOf(commentEvent({ postId, postOwner: user, author: 'u-cid', createdAt: minute(n) })),
        {
          storage: suite.storage,
          eventsRetentionDays: 30,
          trayRetentionDays: 90,
          networkId: 'default',
          onWritten: publisher.recordsWritten,
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const delivered = () =>
      new Set(stream.events.filter(named('record')).map((e) => dataOf<NotificationRecord>(e).targetId));
    const deadline = Date.now() + 10_000;
    while (delivered().size < posts.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const missed = posts.filter((postId) => !delivered().has(postId));
    expect(missed, `${missed.length} of ${posts.length} never delivered`).to.deep.equal([]);
    stream.close();
  });

  it('keeps removals of users on every master, one call per shard (no CROSSSLOT)', async () => {
    const log = createRemovalLog(connect(), 'live');
    const users = Array.from({ length: 300 }, (_, i) => `u-cl-removed-${i}`);
    await log.record(
      users.map((userId) => ({ userId, key: `post_c1_${userId}` })),
      Date.now(),
    );
    for (const userId of users) expect(await log.since(userId, 0)).to.deep.equal([`post_c1_${userId}`]);
  });
});

import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { createLogger } from '../../../../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../../../../tray-service/storage/port.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { recordGroup } from '../../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import { keyedBatches } from '../../../../../shared/async/keyed-batches.ts';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { processJob, type ProcessOptions } from '../support/process-job.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName, useMongo } from '../../../../support/suite-resources.ts';
import { waitFor } from '../../../../support/wait-for.ts';
import { membershipEvent, minute, postEvent } from '../../../worker/event-builder.ts';
import { jobDataOf } from '../../../worker/worker-harness.ts';

// A fan-out rewrites every member's record whatever it carries: the posts of one community that
// wait while its fan-out runs go out together in the next, each member's record written once for
// them, and the records are what one fan-out per post would have made.
describe('fanOutCommunityPosts: one community’s waiting posts fanned out together', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  const POSTS = 6;
  const batches: number[] = [];
  let submitted = 0;
  const batchPosts = keyedBatches<Activity>({ maxBatch: 32 });
  const options: ProcessOptions = {
    eventsRetentionDays: 30,
    trayRetentionDays: 90,
    fanOutBatch: 4,
    // Counts what reaches the batches, and holds the first fan-out until every post is waiting.
    scheduleFanOut: (key, post, run) => {
      submitted += 1;
      return batchPosts(key, post, async (posts) => {
        batches.push(posts.length);
        if (batches.length === 1)
          await waitFor(() => submitted === POSTS, 10_000, 'every post waiting for its fan-out');
        await run(posts);
      });
    },
  };
  const process = (envelope: Parameters<typeof jobDataOf>[0]) =>
    processJob(mongo.db, jobDataOf(envelope), options);
  const members = Array.from({ length: 10 }, (_, i) => `u-m${i}`);
  const record = (userId: string) =>
    mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: `post_c-d_${userId}` });

  before(async () => {
    await ensureTestCollections(mongo.db, workerCollections);
    await process(membershipEvent('join', members, 'c-d', minute(-10)));
    // Joins between the third and the fourth post: only the last three reach them.
    await process(membershipEvent('join', ['u-late'], 'c-d', minute(3.5)));
  });

  it('takes the posts that waited in one fan-out, and gives every member the posts they were there for', async () => {
    await Promise.all(
      Array.from({ length: POSTS }, (_, i) =>
        process(
          postEvent({
            postId: `p-d${i + 1}`,
            communityId: 'c-d',
            author: `u-m${i}`,
            createdAt: minute(i + 1),
          }),
        ),
      ),
    );
    // The first fan-out held until all had arrived: whatever it took, the rest went in one more.
    expect(batches.reduce((sum, n) => sum + n, 0)).to.equal(POSTS);
    expect(batches.length).to.be.at.most(2);
    const bystander = await record('u-m9');
    expect(bystander).to.include({ actorsCount: POSTS, lastActionId: `p-d${POSTS}`, hasRead: false });
    expect(bystander?.lastUpdate).to.equal(Date.parse(minute(POSTS)));
    expect(bystander?.actors.map((actor) => actor.userId)).to.deep.equal(['u-m5', 'u-m4', 'u-m3']);
    // An author is not counted in their own record; the late member counts only posts 4 to 6.
    expect(await record('u-m0')).to.include({ actorsCount: POSTS - 1, lastActionId: `p-d${POSTS}` });
    expect(await record('u-late')).to.include({ actorsCount: 3, lastActionId: `p-d${POSTS}` });
    const versions = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ group: recordGroup('post', 'c-d') })
      .toArray();
    expect(versions).to.have.length(members.length + 1);
  });
});

// A fan-out goes out in batches of TRAY_FANOUT_BATCH members, one after another: a member may call
// last-read while it runs, before their batch lands. Each batch is stamped with the tray's clock
// when it is written (WriteContext.clock), so that record is unread, as one written after the call.
describe('fanOutPosts on MongoDB: each batch stamped at its own time', function () {
  this.timeout(60_000);
  const dbName = uniqueName('fanout-clock');
  let storage: TrayStorage | undefined;
  let client: MongoClient | undefined;
  const T0 = Date.UTC(2026, 10, 20, 10);
  before(async () => {
    storage = await openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: createLogger({ name: 'test', level: 'silent' }),
      fanOutBatch: 1,
    });
    client = await MongoClient.connect(testStack().mongoUri);
  });
  after(async () => {
    await storage?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('a member whose last-read call came while the fan-out ran, before their batch, has the post unread', async () => {
    const members = ['u-clock-1', 'u-clock-2'];
    await storage!.writes.applyMemberships(
      members.map((userId) => ({ communityId: 'c-clock', userId, active: true, at: T0 - 60_000 })),
      { now: T0 - 60_000, retentionDays: 90 },
    );
    let clock = T0;
    const batches: string[][] = [];
    await storage!.writes.fanOutPosts(
      'c-clock',
      [aPost('u-author', { id: 'p-clock', at: T0, communityId: 'c-clock' })],
      {
        now: T0,
        clock: () => clock,
        retentionDays: 90,
        onWritten: async (records) => {
          batches.push(records.map((record) => record.userId));
          if (batches.length > 1) return;
          // The other member opens the app 10 s on, while the fan-out goes on: their last-read call.
          const other = members.find((userId) => !records.some((record) => record.userId === userId))!;
          clock = T0 + 20_000;
          await storage!.lastRead.record(other, T0 + 10_000);
        },
      },
    );
    expect(batches).to.have.lengthOf(2);
    const [first, second] = batches.map(([userId]) => userId!);
    expect(await storage!.records.countUnread(first!, 'recorded', T0 + 30_000)).to.equal(1);
    expect(
      await storage!.records.countUnread(second!, 'recorded', T0 + 30_000),
      'the member whose last-read came first',
    ).to.equal(1);
    const [record] = (await storage!.records.pageAfter(second!, undefined, 10, T0 + 30_000)).records;
    expect(record?.unreadAt).to.equal(T0 + 20_000);
  });

  // Every batch started from the group as read before the first: a record a delete-all removed
  // meanwhile was taken for one deleted after this call wrote it, and its member never got the post,
  // which PostgreSQL (each batch its own statement) gives as after any delete-all.
  it('a member who deleted their tray while the fan-out ran, before their batch, gets the post', async () => {
    const members = ['u-wipe-1', 'u-wipe-2'];
    await storage!.writes.applyMemberships(
      members.map((userId) => ({ communityId: 'c-wipe', userId, active: true, at: T0 - 60_000 })),
      { now: T0 - 60_000, retentionDays: 90 },
    );
    await storage!.writes.fanOutPosts(
      'c-wipe',
      [aPost('u-author', { id: 'p-wipe-0', at: T0 - 30_000, communityId: 'c-wipe' })],
      { now: T0 - 30_000, retentionDays: 90 },
    );
    const batches: string[][] = [];
    await storage!.writes.fanOutPosts(
      'c-wipe',
      [aPost('u-author', { id: 'p-wipe-1', at: T0, communityId: 'c-wipe' })],
      {
        now: T0,
        retentionDays: 90,
        onWritten: async (records) => {
          batches.push(records.map((record) => record.userId));
          if (batches.length > 1) return;
          const other = members.find((userId) => !records.some((record) => record.userId === userId))!;
          expect(await storage!.records.deleteAll(other)).to.equal(1);
        },
      },
    );
    expect(batches).to.have.lengthOf(2);
    for (const userId of members) {
      const [record] = (await storage!.records.pageAfter(userId, undefined, 10, T0 + 30_000)).records;
      expect(record?.lastActionId, userId).to.equal('p-wipe-1');
    }
  });

  it('without a clock (tests that pin the time), every batch takes the context’s time', async () => {
    const members = ['u-pinned-1', 'u-pinned-2'];
    await storage!.writes.applyMemberships(
      members.map((userId) => ({ communityId: 'c-pinned', userId, active: true, at: T0 - 60_000 })),
      { now: T0 - 60_000, retentionDays: 90 },
    );
    await storage!.writes.fanOutPosts(
      'c-pinned',
      [aPost('u-author', { id: 'p-pinned', at: T0, communityId: 'c-pinned' })],
      {
        now: T0,
        retentionDays: 90,
      },
    );
    for (const userId of members) {
      const [record] = (await storage!.records.pageAfter(userId, undefined, 10, T0 + 30_000)).records;
      expect(record?.unreadAt).to.equal(T0);
    }
  });
});

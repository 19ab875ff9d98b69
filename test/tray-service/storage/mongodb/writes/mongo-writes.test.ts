import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { jobScope } from '../../../../../shared/async/job-scope.ts';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import type { TrayRecord } from '../../../../../tray-service/domain/tray-record.ts';
import { openMongoStorage } from '../../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage, WriteContext } from '../../../../../tray-service/storage/port.ts';
import { mapEvent } from '../../../../../tray-service/domain/map-event.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { BASE_TIME, commentEvent, minute } from '../../../worker/event-builder.ts';

const now = BASE_TIME + DAY_MS / 2;

/** The activities of one comment by `author` on u-ana's post p-hot. */
function comment(index: number): Activity[] {
  const envelope = commentEvent({
    postId: 'p-hot',
    postOwner: 'u-ana',
    commentId: `cm-${index}`,
    author: `u-a${index}`,
    createdAt: minute(index),
  });
  return mapEvent({ event: envelope.event, data: envelope.data, receivedAt: now }).activities;
}

// Several workers, each with its own storage, write the same record at once: the compare-and-set
// (claims on FerretDB) must leave exactly what writing them one by one leaves.
describe('MongoDB adapter writes: concurrent writers of one record', function () {
  this.timeout(120_000);
  const dbName = uniqueName('mw');
  const storages: TrayStorage[] = [];
  const open = () =>
    openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: pino({ level: 'silent' }),
    });
  const context = (told?: TrayRecord[]): WriteContext => ({
    now,
    retentionDays: 90,
    ...(told ? { onWritten: async (records: readonly TrayRecord[]) => void told.push(...records) } : {}),
  });

  before(async () => {
    // One after the other: both ensure the same collections.
    storages.push(await open());
    storages.push(await open());
  });

  after(async () => {
    for (const storage of storages) await storage.close();
    const client = await MongoClient.connect(testStack().mongoUri);
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  });

  it('counts every actor once and names the newest three', async () => {
    const AUTHORS = 16;
    await Promise.all(
      Array.from({ length: AUTHORS }, (_, index) =>
        jobScope.run(`job-${index}`, () =>
          storages[index % 2]!.writes.applyPersonal(comment(index), context()),
        ),
      ),
    );
    const [record] = (await storages[0]!.records.pageAfter('u-ana', undefined, 10, now)).records;
    expect(record?.actorsCount).to.equal(AUTHORS);
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-a15', 'u-a14', 'u-a13']);
    expect(record?.lastActionId).to.equal('cm-15');
  });

  it('changes nothing when the same activities are applied again (a redelivery)', async () => {
    const before = await storages[1]!.records.pageAfter('u-ana', undefined, 10, now);
    const told: TrayRecord[] = [];
    await Promise.all(
      [3, 9, 15].map((index) =>
        jobScope.run(`job-${index}`, () =>
          storages[index % 2]!.writes.applyPersonal(comment(index), context(told)),
        ),
      ),
    );
    expect(told).to.deep.equal([]);
    expect(await storages[1]!.records.pageAfter('u-ana', undefined, 10, now)).to.deep.equal(before);
  });

  it('a mark-read racing a new comment never hides the comment: the record ends unread or shows it read', async () => {
    await Promise.all([
      storages[0]!.records.markAllRead('u-ana', now),
      jobScope.run('job-16', () => storages[1]!.writes.applyPersonal(comment(16), context())),
    ]);
    const [record] = (await storages[0]!.records.pageAfter('u-ana', undefined, 10, now)).records;
    expect(record?.actorsCount).to.equal(17);
    expect(record?.lastActionId).to.equal('cm-16');
    // Both writes went through the compare-and-set: if the mark came last the record is read, and
    // then it was read with the new comment in it (a lost update would show 16 actors).
    expect(await storages[0]!.records.countUnread('u-ana', 0, now)).to.equal(record?.hasRead ? 0 : 1);
  });
});

describe('MongoDB adapter writes: a deleted user', function () {
  this.timeout(60_000);
  const dbName = uniqueName('mwd');
  let storage: TrayStorage;

  before(async () => {
    storage = await openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: pino({ level: 'silent' }),
    });
  });

  after(async () => {
    await storage.close();
    const client = await MongoClient.connect(testStack().mongoUri);
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  });

  it("stamps the records renamed to 'Deleted user' with the tray's clock, not the process's", async () => {
    await storage.writes.applyPersonal(comment(1), { now, retentionDays: 90 });
    const deletedAt = now + 60_000;
    await storage.writes.applyProfiles(
      [{ userId: 'u-a1', displayName: 'Deleted user', deleted: true, at: deletedAt }],
      { now: deletedAt, retentionDays: 90 },
    );
    const [record] = (await storage.records.pageAfter('u-ana', undefined, 10, deletedAt)).records;
    expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Deleted user']);
    expect(record?.changedAt).to.equal(deletedAt);
  });
});

// Two worker processes fan out posts of one community at once; each process serialises a
// community's posts only among its own jobs. Whatever the interleaving, every member's record must
// end as the same posts applied one by one leave it.
describe('MongoDB adapter writes: concurrent fan-outs to one community', function () {
  this.timeout(120_000);
  const dbName = uniqueName('mwf');
  const storages: TrayStorage[] = [];
  const members = ['u-a', 'u-b', 'u-c', 'u-d'];
  const POSTS = 8;
  const context = (): WriteContext => ({ now, retentionDays: 90 });

  before(async () => {
    for (let index = 0; index < 2; index++) {
      storages.push(
        await openMongoStorage(testStack().mongoUri, dbName, {
          appName: 'tests',
          logger: pino({ level: 'silent' }),
        }),
      );
    }
  });

  after(async () => {
    for (const storage of storages) await storage.close();
    const client = await MongoClient.connect(testStack().mongoUri);
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  });

  /** The posts to `communityId`: two by each member, at four distinct times. */
  async function community(communityId: string): Promise<Activity[]> {
    await jobScope.run(`join-${communityId}`, () =>
      storages[0]!.writes.applyMemberships(
        members.map((userId) => ({ communityId, userId, active: true, at: Date.parse(minute(0)) })),
        context(),
      ),
    );
    return Array.from({ length: POSTS }, (_, index) =>
      aPost(members[index % members.length]!, {
        id: `${communityId}-p-${index}`,
        at: Date.parse(minute(1)) + (index % 4),
        communityId,
      }),
    );
  }

  /** A member's record of `communityId`, without what names the community or the write's time. */
  async function recordOf(userId: string, communityId: string) {
    const { records } = await storages[0]!.records.pageAfter(userId, undefined, 20, now);
    const record = records.find((candidate) => candidate.targetId === communityId);
    if (!record) return undefined;
    const untag = (text: string) => text.replace(communityId, '');
    return {
      ...record,
      key: '',
      targetId: '',
      feed: { ...record.feed, id: '' },
      lastActionId: untag(record.lastActionId),
      unreadAt: 0,
      changedAt: 0,
    };
  }

  async function expectSerialResult(parallelId: string, serialId: string) {
    for (const userId of members) {
      const serial = await recordOf(userId, serialId);
      expect(serial?.actorsCount, userId).to.equal(members.length - 1);
      expect(await recordOf(userId, parallelId), userId).to.deep.equal(serial);
    }
  }

  before(async () => {
    for (const [index, post] of (await community('c-serial')).entries()) {
      await jobScope.run(`post-serial-${index}`, () =>
        storages[0]!.writes.fanOutPosts('c-serial', [post], context()),
      );
    }
  });

  it('leaves every member the serial result when two processes fan out 8 posts at once', async () => {
    const posts = await community('c-jobs');
    await Promise.all(
      posts.map((post, index) =>
        jobScope.run(`post-jobs-${index}`, () =>
          storages[index % 2]!.writes.fanOutPosts('c-jobs', [post], context()),
        ),
      ),
    );
    await expectSerialResult('c-jobs', 'c-serial');
  });

  it('leaves every member the serial result when the concurrent fan-outs share one owner', async () => {
    const posts = await community('c-owner');
    await Promise.all(
      posts.map((post, index) =>
        jobScope.run('one-job', () => storages[index % 2]!.writes.fanOutPosts('c-owner', [post], context())),
      ),
    );
    await expectSerialResult('c-owner', 'c-serial');
  });
});

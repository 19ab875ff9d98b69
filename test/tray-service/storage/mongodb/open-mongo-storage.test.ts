import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { openMongoStorage } from '../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { jobScope } from '../../../../shared/async/job-scope.ts';
import type { TrayStorage, WriteContext } from '../../../../tray-service/storage/port.ts';
import { mapEvent } from '../../../../tray-service/domain/map-event.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import {
  BASE_TIME,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postEvent,
  userDeleteEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';

/** The fields a stored record keeps to itself: never in what readers get. */
const STORAGE_FIELDS = ['_id', 'group', 'version', 'countFrom', 'expiresAt'];

describe('openMongoStorage: the storage port on MongoDB', function () {
  this.timeout(60_000);
  const dbName = uniqueName('ms');
  let storage: TrayStorage;
  const written: TrayRecord[] = [];
  const now = BASE_TIME + DAY_MS / 2;
  const context = (): WriteContext => ({
    now,
    retentionDays: 90,
    onWritten: async (records) => void written.push(...records),
  });

  /** What the worker does with a delivery: store it, then each kind of change through the port. */
  async function deliver(envelope: TestEnvelope): Promise<void> {
    const mapped = mapEvent({ event: envelope.event, data: envelope.data, receivedAt: now });
    const post = mapped.activities.find((activity) => activity.audience.kind === 'community');
    const owner = dedupeKeyOf(envelope);
    await storage.events.store(
      {
        key: owner,
        event: envelope.event,
        data: envelope.data,
        webhook: 'test-hook',
        receivedAt: new Date(now),
      },
      {
        status: mapped.status,
        ...(post?.audience.kind === 'community'
          ? { communityPost: { communityId: post.audience.communityId, at: post.at, activity: post } }
          : {}),
      },
      { retentionDays: 30, now: new Date(now) },
    );
    // The job's own scope, as the worker runs it: its writes' claims are this job's.
    await jobScope.run(owner, async () => {
      await storage.writes.applyMemberships(mapped.memberships, context());
      await storage.writes.applyProfiles(mapped.profiles, context());
      await storage.writes.applyPersonal(
        mapped.activities.filter((activity) => activity.audience.kind === 'user'),
        context(),
      );
      const posts = mapped.activities.filter(
        (activity): activity is Activity & { audience: { kind: 'community'; communityId: string } } =>
          activity.audience.kind === 'community',
      );
      for (const communityId of new Set(posts.map((activity) => activity.audience.communityId)))
        await storage.writes.fanOutPosts(
          communityId,
          posts.filter((activity) => activity.audience.communityId === communityId),
          context(),
        );
    });
  }

  before(async () => {
    storage = await openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: pino({ level: 'silent' }),
    });
  });

  after(async () => {
    await storage?.close();
    const client = await MongoClient.connect(testStack().mongoUri);
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  });

  describe('records', () => {
    before(async () => {
      await deliver(postEvent({ postId: 'p_1', author: 'u-ana', createdAt: minute(0) }));
      await deliver(
        commentEvent({ postId: 'p_1', postOwner: 'u-ana', author: 'u-cid', createdAt: minute(5) }),
      );
    });

    it('hands records out keyed by encodeRecordKey, without the adapter’s own fields', async () => {
      const { records, nextPage } = await storage.records.pageAfter('u-ana', undefined, 10, now);
      expect(nextPage).to.equal(0);
      expect(records).to.have.length(1);
      const [record] = records as [TrayRecord];
      expect(record.key).to.equal(encodeRecordKey({ verb: 'comment', targetId: 'p_1', userId: 'u-ana' }));
      expect(record.key).to.equal('comment_p%5F1_u-ana');
      expect(record).to.include({ verb: 'comment', targetId: 'p_1', userId: 'u-ana', actorsCount: 1 });
      expect(record.actors.map((actor) => actor.userId)).to.deep.equal(['u-cid']);
      expect(record.changedAt).to.equal(now);
      for (const field of STORAGE_FIELDS) expect(record).not.to.have.property(field);
    });

    it('tells onWritten of each write in the reader’s shape', () => {
      const told = written.find((record) => record.key === 'comment_p%5F1_u-ana');
      expect(told).to.include({ userId: 'u-ana', hasRead: false });
      for (const field of STORAGE_FIELDS) expect(told).not.to.have.property(field);
    });

    it('counts, pages by number, and marks one record read, returning the records it changed', async () => {
      expect(await storage.records.countUnread('u-ana', 0, now)).to.equal(1);
      expect(await storage.records.count('u-ana', now)).to.equal(1);
      expect(await storage.records.count('u-ana', now, ['comment'])).to.equal(0);
      expect(
        (await storage.records.pageNumber('u-ana', 1, 10, now, ['mention'])).map((record) => record.key),
      ).to.deep.equal(['comment_p%5F1_u-ana']);
      const missing = await storage.records.markRead('u-ana', 'comment', 'p-none', now);
      expect(missing).to.deep.equal({ found: false, changed: [] });
      const marked = await storage.records.markRead('u-ana', 'comment', 'p_1', now);
      expect(marked.found).to.equal(true);
      expect(marked.changed.map((record) => [record.key, record.hasRead])).to.deep.equal([
        ['comment_p%5F1_u-ana', true],
      ]);
      expect((await storage.records.markRead('u-ana', 'comment', 'p_1', now)).changed).to.deep.equal([]);
      expect(await storage.records.countUnread('u-ana', 0, now)).to.equal(0);
    });

    it('never marks another user’s record whose plain key joins to the same text', async () => {
      // verb comment, target `p`, user `1_u-ana` joins to the stored key of (comment, p_1, u-ana).
      expect(await storage.records.markRead('1_u-ana', 'comment', 'p', now)).to.deep.equal({
        found: false,
        changed: [],
      });
    });

    it('marks all read, lists changes since a time, and deletes the whole tray', async () => {
      await deliver(commentEvent({ postId: 'p-2', commentId: 'cm-2', postOwner: 'u-ana', author: 'u-bo' }));
      const changed = await storage.records.markAllRead('u-ana', now);
      expect(changed.map((record) => record.key)).to.deep.equal(['comment_p-2_u-ana']);
      const since = await storage.records.changedSince('u-ana', 0, now);
      expect(since.map((record) => record.key).sort()).to.deep.equal([
        'comment_p%5F1_u-ana',
        'comment_p-2_u-ana',
      ]);
      // Nothing after the newest change: the mark, a millisecond past the delivery it followed on
      // the same clock (nextChangedAt).
      const newest = Math.max(...since.map((record) => record.changedAt));
      expect(newest).to.equal(now + 1);
      expect(await storage.records.changedSince('u-ana', newest, now)).to.deep.equal([]);
      expect(await storage.records.deleteAll('u-ana')).to.equal(2);
      expect(await storage.records.count('u-ana', now)).to.equal(0);
    });
  });

  describe('writes', () => {
    it('fans a post out to those who were members at its createdAt, and a late join backfills it', async () => {
      await deliver(membershipEvent('join', ['u-m1'], 'c-w', minute(-10)));
      await deliver(postEvent({ postId: 'p-w', communityId: 'c-w', author: 'u-au', createdAt: minute(1) }));
      // Joined before the post, delivered after it.
      await deliver(membershipEvent('join', ['u-m2'], 'c-w', minute(-5)));
      // Joined after the post: not a recipient.
      await deliver(membershipEvent('join', ['u-m3'], 'c-w', minute(2)));
      for (const [userId, expected] of [
        ['u-m1', 1],
        ['u-m2', 1],
        ['u-m3', 0],
        ['u-au', 0],
      ] as const)
        expect(await storage.records.count(userId, now), userId).to.equal(expected);
      const [record] = (await storage.records.pageAfter('u-m2', undefined, 10, now)).records;
      expect(record?.key).to.equal('post_c-w_u-m2');
    });

    it('rewrites a deleted user’s snapshots to `Deleted user` and removes their own tray', async () => {
      await deliver(commentEvent({ postId: 'p-d', commentId: 'cm-d', postOwner: 'u-ed', author: 'u-gone' }));
      await deliver(commentEvent({ postId: 'p-e', commentId: 'cm-e', postOwner: 'u-gone', author: 'u-ed' }));
      written.length = 0;
      await deliver(userDeleteEvent('u-gone'));
      const [record] = (await storage.records.pageAfter('u-ed', undefined, 10, now)).records;
      expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Deleted user']);
      expect(written.map((told) => told.key)).to.include('comment_p-d_u-ed');
      expect(await storage.records.count('u-gone', now)).to.equal(0);
    });
  });

  describe('events', () => {
    const envelope = postEvent({ postId: 'p-ev', communityId: 'c-ev' });
    const key = dedupeKeyOf(envelope);
    const received = new Date(now);

    it('stores a delivery once, and a second store gets the event as first stored', async () => {
      const first = await storage.events.store(
        { key, event: envelope.event, data: envelope.data, webhook: 'hook-a', receivedAt: received },
        { status: 'applied' },
        { retentionDays: 30, now: received },
      );
      expect(first).to.deep.include({ key, webhook: 'hook-a', status: 'applied' });
      const again = await storage.events.store(
        { key, event: envelope.event, data: envelope.data, webhook: 'hook-b', receivedAt: received },
        { status: 'invalid', error: 'late' },
        { retentionDays: 30, now: new Date(now + 1_000) },
      );
      expect(again).to.deep.equal(first);
    });

    it('lists, gets, streams and counts events with their key and expiry and without other storage fields', async () => {
      const filter = { webhook: 'hook-a' };
      const page = await storage.events.list(filter, 10);
      expect(page.items.map((item) => item.key)).to.deep.equal([key]);
      expect(page.next).to.equal(undefined);
      const got = await storage.events.get(key);
      expect(got).to.deep.equal(page.items[0]);
      expect(Object.keys(got ?? {}).sort()).to.deep.equal(
        ['data', 'event', 'expiresAt', 'key', 'receivedAt', 'status', 'storedAt', 'webhook'].sort(),
      );
      expect(await storage.events.get('no-such-key')).to.equal(undefined);
      const streamed = [];
      for await (const event of storage.events.stream(filter)) streamed.push(event.key);
      expect(streamed).to.deep.equal([key]);
      expect(await storage.events.count(filter)).to.equal(1);
    });
  });

  describe('the rest of the port', () => {
    it('keeps the latest last-read and delete-all times, never moving back', async () => {
      expect(await storage.lastRead.latest('u-lr')).to.equal(0);
      await storage.lastRead.record('u-lr', 20);
      await storage.lastRead.record('u-lr', 10);
      expect(await storage.lastRead.latest('u-lr')).to.equal(20);
      await storage.clears.record('u-lr', 5);
      expect(await storage.clears.latest('u-lr')).to.equal(5);
    });

    it('blocks, pages and unblocks', async () => {
      await storage.blockList.block('n_u-a', 'u-b');
      await storage.blockList.block('n_u-a', 'u-c');
      const page = await storage.blockList.page('n_u-a', undefined, 1);
      expect(page.results).to.deep.equal([{ netid_uid: 'n_u-a', blocked_userId: 'u-b' }]);
      expect(page.paginationToken).to.deep.equal({ netid_uid: 'n_u-a', blocked_userId: 'u-b' });
      await storage.blockList.unblock('n_u-a', 'u-b');
      expect([...(await storage.blockList.blockedAmong('n_u-a', ['u-b', 'u-c']))]).to.deep.equal(['u-c']);
    });

    it('keeps each user’s newest ban change', async () => {
      await storage.bans.apply([
        { userId: 'u-ban', banned: true, at: 2 },
        { userId: 'u-ban', banned: false, at: 1 },
      ]);
      expect(await storage.bans.all()).to.deep.equal([{ userId: 'u-ban', banned: true, at: 2 }]);
    });

    it('saves decisions once and answers undefined for an unknown one', async () => {
      const decision = {
        id: 'd-1',
        eventKey: 'e-1',
        event: 'post.didCreate',
        eventReceivedAt: new Date(now),
        rule: 'blocked-words',
        action: 'flag' as const,
        reason: 'word',
        subject: { type: 'post', id: 'p-1' },
        decidedAt: new Date(now),
        expiresAt: new Date(now + 30 * DAY_MS),
        delivery: 'pending' as const,
        deliveryAttempts: 0,
      };
      await storage.decisions.saveAll([decision]);
      await storage.decisions.saveAll([{ ...decision, reason: 'changed' }]);
      expect((await storage.decisions.get('d-1'))?.reason).to.equal('word');
      expect(await storage.decisions.pendingAmong(['d-1', 'd-2'])).to.deep.equal(['d-1']);
      await storage.decisions.markDelivered('d-1', 1, new Date(now));
      expect(
        (await storage.decisions.list({ delivery: 'delivered' }, 10)).items.map((d) => d.id),
      ).to.deep.equal(['d-1']);
      expect(await storage.decisions.get('d-2')).to.equal(undefined);
    });

    it('imports members, who then receive the community’s posts', async () => {
      const counts = await storage.members.importBatch(
        [
          { communityId: 'c-imp', userId: 'u-i1', since: BASE_TIME },
          { communityId: 'c-imp', userId: 'u-i2', since: BASE_TIME },
        ],
        BASE_TIME,
      );
      expect(counts).to.deep.equal({ inserted: 2, updated: 0, unchanged: 0 });
      expect(
        await storage.members.importBatch(
          [{ communityId: 'c-imp', userId: 'u-i1', since: BASE_TIME }],
          BASE_TIME,
        ),
      ).to.deep.equal({ inserted: 0, updated: 0, unchanged: 1 });
      await deliver(
        postEvent({ postId: 'p-imp', communityId: 'c-imp', author: 'u-i1', createdAt: minute(3) }),
      );
      expect(await storage.records.count('u-i2', now)).to.equal(1);
      expect(await storage.records.count('u-i1', now)).to.equal(0);
    });

    it('purges expired records and events, answers ping, and reports what went', async () => {
      await storage.ping();
      // Events live 30 days after they were received, records 90 after their lastUpdate.
      expect((await storage.purgeExpired(new Date(now + 31 * DAY_MS))).events).to.be.greaterThan(0);
      expect((await storage.purgeExpired(new Date(now + 92 * DAY_MS))).records).to.be.greaterThan(0);
      expect(await storage.records.count('u-i2', now + 92 * DAY_MS)).to.equal(0);
    });
  });
});

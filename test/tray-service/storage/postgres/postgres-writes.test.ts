import { expect } from 'chai';
import pg from 'pg';
import { recordKey, type Activity } from '../../../../tray-service/domain/activity.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import {
  PURGE_GRACE_MS,
  purgeExpiredRecords,
} from '../../../../tray-service/storage/postgres/purge-expired-records.ts';
import { createPostgresMembersImport } from '../../../../tray-service/storage/postgres/postgres-members-import.ts';
import { createPostgresRemovalOutcomes } from '../../../../tray-service/storage/postgres/postgres-removal-outcomes.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import {
  BACKFILL_BATCH,
  createPostgresWrites,
  MEMBERS_PER_TRANSACTION,
  PERSONAL_ACTIVITIES_PER_WRITE,
} from '../../../../tray-service/storage/postgres/postgres-writes.ts';
import { at, comment, join, leave, NOW, post, RETENTION_MS, useTray } from './tray-fixture.ts';
import { aroundClientQueries, aroundQueries } from './around-queries.ts';
import { groupLock, lockKeys } from '../../../../tray-service/storage/postgres/lock-keys.ts';
import { NEW_INBOX_STATE } from '../../../../tray-service/domain/inbox-state.ts';
import { SETTLE_MS } from '../../../../tray-service/domain/settle-window.ts';
import { useStoppablePostgres } from '../../../support/use-stoppable-postgres.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { runCommand } from '../../../support/run-script.ts';

const names = (record: { actors: { userId: string }[] } | undefined) =>
  record?.actors.map((actor) => actor.userId);

describe('storage/postgres writes (TrayWritesPort)', () => {
  const tray = useTray();
  const personal = (activities: Activity[], now = NOW) =>
    tray.writes.applyPersonal(activities, tray.context(now));
  /**
   * Starts `write` (given its job's start) while another session holds `lock`, lets it wait there
   * 1.5 s, releases the lock and waits for the write: answers when the lock was released.
   */
  const releasedWhileWriting = async (lock: string, write: (jobStart: number) => Promise<unknown>) => {
    const holder = await tray.pg.pool.connect();
    let released = 0;
    try {
      await holder.query('BEGIN');
      await lockKeys(holder, [lock]);
      const writing = write(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      released = Date.now();
      await holder.query('COMMIT');
      await writing;
      return released;
    } finally {
      if (!released) await holder.query('ROLLBACK');
      holder.release();
    }
  };

  describe('grouping personal activities', () => {
    it('groups actions on one verb and target into one record keyed v_tarid_uid', async () => {
      await personal([comment('p-1', 'u-cid', 1)]);
      await personal([comment('p-1', 'u-dee', 2)]);
      const record = await tray.record('u-ana', 'comment', 'p-1');
      expect(record).to.deep.include({
        key: encodeRecordKey({ verb: 'comment', targetId: 'p-1', userId: 'u-ana' }),
        userId: 'u-ana',
        targetType: 'post',
        targetName: 'Hiking Club',
        parentTargetId: 'c-hike',
        lastActionId: 'cm-p-1-u-dee-2',
        lastActionSegmentNo: 2,
        actorsCount: 2,
        lastUpdate: at(2),
        hasRead: false,
        unreadAt: NOW,
        // The second write on the same clock: a millisecond past the first (nextChangedAt).
        changedAt: NOW + 1,
      });
      expect(record?.actors).to.deep.equal([
        { userId: 'u-dee', name: 'U-DEE', imageUrl: 'https://img/u-dee', at: at(2) },
        { userId: 'u-cid', name: 'U-CID', imageUrl: 'https://img/u-cid', at: at(1) },
      ]);
      expect(tray.told.at(-1)).to.deep.equal({ ...record, ...NEW_INBOX_STATE });
    });

    it('names the 3 newest distinct actors newest first and counts them all; one acting again moves to the front, counted once', async () => {
      for (const [index, author] of ['u-cid', 'u-dee', 'u-eve', 'u-fay'].entries())
        await personal([comment('p-1', author, index)]);
      let record = await tray.record('u-ana', 'comment', 'p-1');
      expect(names(record)).to.deep.equal(['u-fay', 'u-eve', 'u-dee']);
      expect(record?.actorsCount).to.equal(4);
      await personal([comment('p-1', 'u-cid', 10)]);
      record = await tray.record('u-ana', 'comment', 'p-1');
      expect(names(record)).to.deep.equal(['u-cid', 'u-fay', 'u-eve']);
      expect(record?.actorsCount).to.equal(4);
    });

    // A stream counts a change as delivered once its changedAt is SETTLE_MS (5 s) older than the
    // newest it sent: stamped at the job's start, a write that waited behind another's locks landed
    // with a stamp older than that, and a stream could take it for one it had sent.
    it('stamps changedAt and unreadAt with the write clock once the record group’s lock is had, not the job’s start', async () => {
      const released = await releasedWhileWriting(groupLock('comment', 'p-held'), (jobStart) =>
        tray.writes.applyPersonal([comment('p-held', 'u-cid', 1)], {
          ...tray.context(jobStart),
          clock: Date.now,
        }),
      );
      const record = await tray.record('u-ana', 'comment', 'p-held', Date.now());
      expect(record?.changedAt, 'changedAt').to.be.at.least(released);
      expect(record?.unreadAt, 'unreadAt').to.be.at.least(released);
    });

    // The same for a removal that shrinks a group: stamped at the job's start, the shrunk record a
    // removal wrote after waiting behind a fan-out's locks was skipped by a catch-up that had sent
    // a later change, and kept the deleted comment's actor until a full reload.
    it('stamps a removal’s shrunk record with the write clock once the group’s lock is had', async () => {
      await personal([comment('p-shrunk', 'u-cid', 1), comment('p-shrunk', 'u-dee', 2)]);
      const released = await releasedWhileWriting(groupLock('comment', 'p-shrunk'), (jobStart) =>
        tray.writes.applyRemovals(
          [{ kind: 'comment', id: 'cm-p-shrunk-u-dee-2', postId: 'p-shrunk', at: at(3) }],
          {
            ...tray.context(jobStart),
            clock: Date.now,
          },
        ),
      );
      const record = await tray.record('u-ana', 'comment', 'p-shrunk', Date.now());
      expect(names(record)).to.deep.equal(['u-cid']);
      expect(record?.changedAt, 'changedAt').to.be.at.least(released);
    });

    it('never notifies the recipient of their own action, nor names or counts them', async () => {
      await personal([comment('p-1', 'u-ana', 1)]);
      expect(await tray.record('u-ana', 'comment', 'p-1')).to.equal(undefined);
      await personal([comment('p-1', 'u-cid', 2)]);
      const record = await tray.record('u-ana', 'comment', 'p-1');
      expect(names(record)).to.deep.equal(['u-cid']);
      expect(record?.actorsCount).to.equal(1);
    });

    it('changes nothing on a redelivery: a read record stays read and nothing is told', async () => {
      const first = comment('p-1', 'u-cid', 1);
      await personal([first]);
      await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 1);
      tray.told.length = 0;
      await personal([first], NOW + 5);
      expect(await tray.record('u-ana', 'comment', 'p-1')).to.deep.include({ hasRead: true, unreadAt: NOW });
      expect(tray.told).to.deep.equal([]);
    });

    it('widens to an older action delivered late but never moves lastUpdate or the latest action back', async () => {
      await personal([comment('p-1', 'u-cid', 5)]);
      await personal([comment('p-1', 'u-dee', 1)], NOW + 10);
      const record = await tray.record('u-ana', 'comment', 'p-1');
      expect(record).to.deep.include({
        lastUpdate: at(5),
        lastActionId: 'cm-p-1-u-cid-5',
        actorsCount: 2,
        unreadAt: NOW + 10,
      });
      expect(names(record)).to.deep.equal(['u-cid', 'u-dee']);
      // Live streams are told the record exactly as readers then see it: new activity, so back in the
      // inbox, unseen.
      expect(tray.told.at(-1)).to.deep.equal({ ...record, ...NEW_INBOX_STATE });
    });

    it('upserts a batch in one go, a record told once with every action of the batch', async () => {
      await personal([
        comment('p-1', 'u-cid', 1),
        comment('p-1', 'u-dee', 2),
        comment('p-2', 'u-eve', 3, 'u-bob'),
      ]);
      expect(tray.told.map((record) => record.key).sort()).to.deep.equal([
        'comment_p-1_u-ana',
        'comment_p-2_u-bob',
      ]);
      expect(tray.told.find((record) => record.key === 'comment_p-1_u-ana')?.actorsCount).to.equal(2);
    });

    it('turns a read record unread again on new activity', async () => {
      await personal([comment('p-1', 'u-cid', 1)]);
      await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 1);
      await personal([comment('p-1', 'u-dee', 2)], NOW + 2);
      expect(await tray.record('u-ana', 'comment', 'p-1')).to.deep.include({
        hasRead: false,
        unreadAt: NOW + 2,
      });
    });

    it('counts afresh after delete-all: actors older than the new record are not its actors', async () => {
      await personal([comment('p-1', 'u-cid', 1), comment('p-1', 'u-dee', 2)]);
      expect(await tray.records.deleteAll('u-ana')).to.equal(1);
      await personal([comment('p-1', 'u-eve', 3)]);
      const record = await tray.record('u-ana', 'comment', 'p-1');
      expect(names(record)).to.deep.equal(['u-eve']);
      expect(record?.actorsCount).to.equal(1);
    });

    it('stores an activity holding U+0000, which PostgreSQL text cannot, with U+FFFD in its place', async () => {
      const nul = comment('p-1', 'u-cid', 1);
      await personal([{ ...nul, targetName: 'Hi\u0000king', actor: { ...nul.actor, name: 'C\u0000id' } }]);
      expect(await tray.record('u-ana', 'comment', 'p-1')).to.deep.include({ targetName: 'Hi\uFFFDking' });
      expect((await tray.record('u-ana', 'comment', 'p-1'))?.actors[0]?.name).to.equal('C\uFFFDid');
      await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
      const post0 = post('c-hike', 'u-bob', 2);
      await tray.writes.fanOutPosts(
        'c-hike',
        [{ ...post0, feed: { ...post0.feed, name: 'Hiking\u0000' } }],
        tray.context(),
      );
      expect((await tray.record('u-ana', 'post', 'c-hike'))?.feed.name).to.equal('Hiking\uFFFD');
    });

    // The port keeps the storable rule for any caller, not only the worker that cleans deliveries.
    it('stores an activity holding a lone surrogate, which jsonb refuses, with U+FFFD in its place', async () => {
      const cut = comment('p-1', 'u-cid', 1);
      await personal([{ ...cut, actor: { ...cut.actor, name: 'Cid \ud83d' } }]);
      expect((await tray.record('u-ana', 'comment', 'p-1'))?.actors[0]?.name).to.equal('Cid \uFFFD');
    });

    it('keys ids containing the separator apart (escaped record keys)', async () => {
      await personal([comment('p_1', 'u-cid', 1, 'u_x')]);
      await personal([comment('p', 'u-dee', 1, '1_u_x')]);
      const keys = (await tray.records.pageNumber('u_x', 1, 10, NOW, [])).map((record) => record.key);
      expect(keys).to.deep.equal(['comment_p%5F1_u%5Fx']);
    });
  });

  describe('expiry', () => {
    it('hides a record once lastUpdate + retention has passed, and the purge deletes it', async () => {
      await personal([comment('p-1', 'u-cid', 0), comment('p-2', 'u-dee', 10)]);
      const expiry = at(0) + RETENTION_MS;
      expect(await tray.records.count('u-ana', expiry - 1)).to.equal(2);
      expect(await tray.records.count('u-ana', expiry)).to.equal(1);
      expect(await tray.records.countUnread('u-ana', 0, expiry)).to.equal(1);
      expect((await tray.records.pageAfter('u-ana', undefined, 10, expiry)).records).to.have.length(1);
      // Kept for the purge's margin past the expiry (a writer's clock may lag the purge's).
      expect(await purgeExpiredRecords(tray.pg.pool, new Date(expiry + PURGE_GRACE_MS - 1))).to.deep.equal({
        purged: 0,
        failures: [],
      });
      expect(await purgeExpiredRecords(tray.pg.pool, new Date(expiry + PURGE_GRACE_MS))).to.deep.equal({
        purged: 1,
        failures: [],
      });
      const left = await tray.pg.pool.query('SELECT key FROM tray_records');
      expect(left.rows).to.deep.equal([{ key: 'comment_p-2_u-ana' }]);
      // The group actors and kept actions of the same age go with it.
      const actors = await tray.pg.pool.query('SELECT target_id FROM tray_target_actors');
      expect(actors.rows).to.deep.equal([{ target_id: 'p-2' }]);
      const kept = await tray.pg.pool.query('SELECT target_id FROM tray_personal_actions');
      expect(kept.rows).to.deep.equal([{ target_id: 'p-2' }]);
    });

    it('starts an expired record afresh on new activity', async () => {
      await personal([comment('p-1', 'u-cid', 0)]);
      const later = at(0) + RETENTION_MS + 1;
      await personal([{ ...comment('p-1', 'u-dee', 0), at: later, lastActionId: 'late' }], later);
      const record = await tray.record('u-ana', 'comment', 'p-1', later);
      expect(names(record)).to.deep.equal(['u-dee']);
      expect(record?.actorsCount).to.equal(1);
    });
  });

  describe('post fan-out with membership by time', () => {
    const fanOut = (posts: Activity[], now = NOW) =>
      tray.writes.fanOutPosts('c-hike', posts, tray.context(now));
    const memberships = (changes: Parameters<typeof tray.writes.applyMemberships>[0], now = NOW) =>
      tray.writes.applyMemberships(changes, tray.context(now));

    it('reaches every member at the post’s time but its author, grouped into one `post` record', async () => {
      await memberships([join('c-hike', 'u-ana', 0), join('c-hike', 'u-bob', 0), join('c-hike', 'u-cid', 0)]);
      await fanOut([post('c-hike', 'u-cid', 1)]);
      await fanOut([post('c-hike', 'u-bob', 2)]);
      const ana = await tray.record('u-ana', 'post', 'c-hike');
      expect(tray.told.filter((told) => told.userId === 'u-ana').at(-1)).to.deep.equal({
        ...ana,
        ...NEW_INBOX_STATE,
      });
      expect(ana).to.deep.include({
        key: 'post_c-hike_u-ana',
        targetType: 'community',
        lastActionId: 'p-u-bob-2',
        actorsCount: 2,
      });
      expect(names(ana)).to.deep.equal(['u-bob', 'u-cid']);
      expect(names(await tray.record('u-bob', 'post', 'c-hike'))).to.deep.equal(['u-cid']);
      expect(names(await tray.record('u-cid', 'post', 'c-hike'))).to.deep.equal(['u-bob']);
    });

    it('gives a batch of posts to each member for the posts they were there for, in one write', async () => {
      await memberships([join('c-hike', 'u-ana', 0), join('c-hike', 'u-bob', 5)]);
      await fanOut([post('c-hike', 'u-cid', 1), post('c-hike', 'u-dee', 6)]);
      expect(names(await tray.record('u-ana', 'post', 'c-hike'))).to.deep.equal(['u-dee', 'u-cid']);
      const bob = await tray.record('u-bob', 'post', 'c-hike');
      expect(names(bob)).to.deep.equal(['u-dee']);
      expect(bob?.actorsCount).to.equal(1);
      expect(tray.told.map((record) => record.userId).sort()).to.deep.equal(['u-ana', 'u-bob']);
    });

    it('gives a batch the same records as its posts one by one, for members there for all, the end or none of it and for its authors', async () => {
      const shapes = async (communityId: string) => {
        await memberships([
          join(communityId, 'u-all', 0),
          join(communityId, 'u-late', 3),
          join(communityId, 'u-gone', 0),
          leave(communityId, 'u-gone', 3),
          join(communityId, 'u-away', 0),
          leave(communityId, 'u-away', 2),
          join(communityId, 'u-away', 4),
          join(communityId, 'u-cid', 0),
          join(communityId, 'u-after', 9),
        ]);
        return [1, 2, 3, 4, 5].map((minutes, index) =>
          post(communityId, index === 2 ? 'u-cid' : `u-p${index}`, minutes),
        );
      };
      const batched = await shapes('c-batch');
      await tray.writes.fanOutPosts('c-batch', batched, tray.context());
      for (const one of await shapes('c-one')) await tray.writes.fanOutPosts('c-one', [one], tray.context());
      // A member who left during the batch too: their record counts only the posts before the leave.
      for (const userId of ['u-all', 'u-late', 'u-gone', 'u-away', 'u-cid', 'u-after']) {
        const batch = await tray.record(userId, 'post', 'c-batch');
        const one = await tray.record(userId, 'post', 'c-one');
        // changedAt aside: posts one by one write the record once per post, each a millisecond past
        // the last on the same clock (nextChangedAt), where the batch writes it once.
        const comparable = (record: typeof one, communityId: string) =>
          record && {
            ...record,
            changedAt: 0,
            key: '',
            targetId: '',
            feed: { ...record.feed, id: '' },
            lastActionId: record.lastActionId.replace(communityId, ''),
          };
        expect(comparable(batch, 'c-batch'), userId).to.deep.equal(comparable(one, 'c-one'));
      }
      expect(await tray.record('u-after', 'post', 'c-batch')).to.equal(undefined);
      expect(await tray.record('u-all', 'post', 'c-batch')).to.deep.include({
        actorsCount: 5,
        lastUpdate: at(5),
      });
      expect(await tray.record('u-cid', 'post', 'c-batch')).to.deep.include({ actorsCount: 4 });
      expect(await tray.record('u-gone', 'post', 'c-batch')).to.deep.include({
        lastActionId: 'p-u-p1-2',
        lastUpdate: at(2),
        actorsCount: 2,
      });
      expect(await tray.record('u-away', 'post', 'c-batch')).to.deep.include({ actorsCount: 3 });
    });

    it('writes a community larger than one statement reaches a part of its members at a time: each member once, the same records', async () => {
      // A statement over every member of a very large community would outlast the statement timeout
      // and sort all its rows at once; parts of members (by id) bound both.
      const ids = Array.from({ length: 25 }, (_, n) => `m${String(n).padStart(2, '0')}`);
      const shapes = async (communityId: string) => {
        await memberships([
          ...ids.map((userId) => join(communityId, userId, 0)),
          leave(communityId, 'm03', 3),
          leave(communityId, 'm11', 2),
          join(communityId, 'm11', 4),
          join(communityId, 'm30', 9),
        ]);
        return {
          single: [post(communityId, 'm07', 1)],
          batch: [2, 4, 5].map((n) => post(communityId, `m${n}0`, n)),
        };
      };
      const statements: number[] = [];
      const observed = aroundClientQueries(tray.pg.pool, async (text, run) => {
        const result = await run();
        const sql = typeof text === 'string' ? text : (text as { text?: unknown }).text;
        if (typeof sql === 'string' && sql.includes('grouped upsert, community fan-out'))
          statements.push(result.rowCount ?? 0);
        return result;
      });
      const parts = createPostgresWrites(observed, { membersPerFanOutStatement: 10 });
      const inParts = await shapes('c-parts');
      const reachedEach: number[] = [];
      for (const posts of [inParts.single, inParts.batch]) {
        statements.length = 0;
        tray.told.length = 0;
        await parts.fanOutPosts('c-parts', posts, tray.context());
        expect(statements.length, 'fan-out statements').to.be.at.least(3);
        expect(Math.max(...statements), 'records written by one statement').to.be.at.most(10);
        const told = tray.told.map((record) => record.userId);
        expect(told.length, 'members told twice').to.equal(new Set(told).size);
        reachedEach.push(told.length);
      }
      expect(reachedEach, 'members told of the post, then of the batch').to.deep.equal([24, 25]);
      const whole = await shapes('c-whole');
      for (const posts of [whole.single, whole.batch])
        await tray.writes.fanOutPosts('c-whole', posts, tray.context());
      const comparable = (record: TrayRecord | undefined, communityId: string) =>
        record && {
          ...record,
          key: '',
          targetId: '',
          feed: { ...record.feed, id: '' },
          lastActionId: record.lastActionId.replace(communityId, ''),
        };
      let reached = 0;
      for (const userId of [...ids, 'm30']) {
        const inPartsRecord = await tray.record(userId, 'post', 'c-parts');
        if (inPartsRecord) reached += 1;
        expect(comparable(inPartsRecord, 'c-parts'), userId).to.deep.equal(
          comparable(await tray.record(userId, 'post', 'c-whole'), 'c-whole'),
        );
      }
      expect(reached, 'members reached').to.equal(25);
      expect(await tray.record('m30', 'post', 'c-parts')).to.equal(undefined);
      expect(await tray.record('m11', 'post', 'c-parts')).to.deep.include({ actorsCount: 3 });
      expect(await tray.record('m03', 'post', 'c-parts')).to.deep.include({ actorsCount: 2 });
    });

    // Every record of a fan-out was held from its first statement to its commit (about 800 bytes
    // each): a community of millions ran the worker out of memory before any was told.
    it('holds a bounded number of records until its commit, and reads the rest back to tell them', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `h${String(n).padStart(2, '0')}`);
      await memberships([...ids.map((userId) => join('c-held', userId, 0)), leave('c-held', 'h05', 2)]);
      let returned = 0;
      const observed = aroundClientQueries(tray.pg.pool, async (text, run) => {
        const result = await run();
        const sql = typeof text === 'string' ? text : (text as { text?: unknown }).text;
        if (typeof sql === 'string' && sql.includes('grouped upsert, community fan-out'))
          returned += result.rows.length;
        return result;
      });
      const writes = createPostgresWrites(observed, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      for (const [n, posts] of [
        [1, [post('c-held', 'h07', 1)]],
        [2, [3, 4].map((at) => post('c-held', `h1${at}`, at))],
      ] as const) {
        returned = 0;
        tray.told.length = 0;
        await writes.fanOutPosts('c-held', posts, tray.context());
        // Parts return records until 10 are held: at most 10 + 9, and never all 24.
        expect(returned, `records the statements returned, fan-out ${n}`).to.be.within(10, 19);
        const told = tray.told.map((record) => record.userId);
        expect(told.length, `members told twice, fan-out ${n}`).to.equal(new Set(told).size);
        const stored = [];
        for (const userId of ids) {
          stored.push(...(await tray.records.byKeys(userId, [recordKey('post', 'c-held', userId)], NOW)));
        }
        // Fan-out 1 reaches every member but its poster; fan-out 2 (after h05 left) all but h05,
        // whose record of fan-out 1 stays as it was.
        const reached = stored.filter((record) => n === 1 || record.userId !== 'h05');
        expect(reached, `members reached, fan-out ${n}`).to.have.lengthOf(24);
        expect(
          [...tray.told].sort((a, b) => a.userId.localeCompare(b.userId)),
          `told as stored, fan-out ${n}`,
        ).to.deep.equal(reached);
      }
    });

    // A fan-out stamps its records once it holds its locks; a large one commits seconds later and
    // tells its last batches later still. A live stream counts a change stamped more than its
    // settle window (5 s) before the newest it delivered as delivered, and resumes looking back no
    // further: a member whose stream delivered a later change meanwhile, then reconnected, never
    // got the post. Told that late, a batch is stamped anew as it is told.
    it('stamps anew the records it tells long after its stamp, held and read back alike', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `s${String(n).padStart(2, '0')}`);
      await memberships(ids.map((userId) => join('c-slow', userId, 0)));
      let commitPause = 0;
      let committedAt = 0;
      const slow = aroundClientQueries(tray.pg.pool, async (text, run) => {
        if (text !== 'COMMIT') return run();
        await new Promise((resolve) => setTimeout(resolve, commitPause));
        const result = await run();
        committedAt = Date.now();
        return result;
      });
      const writes = createPostgresWrites(slow, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      const stored = async () => {
        const found: InboxRecord[] = [];
        for (const userId of ids)
          found.push(...(await tray.records.byKeys(userId, [recordKey('post', 'c-slow', userId)], NOW)));
        return found.sort((a, b) => a.userId.localeCompare(b.userId));
      };
      const told = () => [...tray.told].sort((a, b) => a.userId.localeCompare(b.userId));
      for (const [n, pause] of [
        [1, 0],
        [2, SETTLE_MS + 500],
      ] as const) {
        commitPause = pause;
        tray.told.length = 0;
        const startedAt = Date.now();
        await writes.fanOutPosts('c-slow', [post('c-slow', 's07', n)], {
          ...tray.context(startedAt),
          clock: () => Date.now(),
        });
        const records = told();
        expect(records, `members told, fan-out ${n}`).to.have.lengthOf(24);
        expect(records, `told as stored, fan-out ${n}`).to.deep.equal(await stored());
        const stamps = records.map((record) => record.changedAt);
        if (pause === 0) {
          // Told at once: as written, every record with the stamp taken with the locks.
          expect(new Set(stamps).size, 'one stamp').to.equal(1);
          expect(stamps[0]).to.be.within(startedAt, committedAt);
        } else {
          // Committed past the window: every record stamped after the commit, when it was told.
          for (const stamp of stamps) expect(stamp).to.be.at.least(committedAt);
        }
      }
    });

    // Stamping anew skips a record another transaction holds. A member's mark holds theirs for
    // milliseconds and announces only the mark: skipped, the record would reach no stream that
    // lacked it. Held briefly, it is waited for; held long, told as it is; and a restamp that
    // fails (its statement timed out) tells the records as they are rather than failing the job
    // after its commit, whose retry would tell nothing.
    it('waits briefly for a record another transaction holds, and tells every record whatever stamping anew meets', async function () {
      this.timeout(60_000);
      const ids = Array.from({ length: 25 }, (_, n) => `w${String(n).padStart(2, '0')}`);
      await memberships(ids.map((userId) => join('c-lock', userId, 0)));
      const heldKey = recordKey('post', 'c-lock', 'w03');
      let pauseCommit = false;
      let committedAt = 0;
      let lockFor = 0;
      let failRestamps = false;
      const hooked = aroundQueries(
        aroundClientQueries(tray.pg.pool, async (text, run) => {
          if (text !== 'COMMIT' || !pauseCommit) return run();
          pauseCommit = false;
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 500));
          const result = await run();
          committedAt = Date.now();
          return result;
        }),
        async (text, run) => {
          if (typeof text !== 'string' || !text.includes('SKIP LOCKED')) return run();
          if (failRestamps)
            throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
          if (lockFor > 0) {
            // Another transaction (a mark) holds w03's record as the restamp runs.
            const holder = await tray.pg.pool.connect();
            await holder.query('BEGIN');
            await holder.query('SELECT 1 FROM tray_records WHERE user_id = $1 AND key = $2 FOR UPDATE', [
              'w03',
              heldKey,
            ]);
            const holdFor = lockFor;
            lockFor = 0;
            setTimeout(() => void holder.query('COMMIT').finally(() => holder.release()), holdFor);
          }
          return run();
        },
      );
      const writes = createPostgresWrites(hooked, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      const lateFanOut = async (n: number) => {
        pauseCommit = true;
        tray.told.length = 0;
        await writes.fanOutPosts('c-lock', [post('c-lock', 'w07', n)], {
          ...tray.context(Date.now()),
          clock: () => Date.now(),
        });
        const told = new Map(tray.told.map((record) => [record.userId, record]));
        expect(told.size, `members told once each, fan-out ${n}`).to.equal(24);
        expect(tray.told, `members told once each, fan-out ${n}`).to.have.lengthOf(24);
        return told;
      };

      lockFor = 100;
      const briefly = await lateFanOut(1);
      for (const [userId, record] of briefly)
        expect(record.changedAt, `${userId} stamped anew`).to.be.at.least(committedAt);

      lockFor = 1_500;
      const long = await lateFanOut(2);
      expect(long.get('w03')?.changedAt, 'w03 told as it is').to.be.below(committedAt);
      expect(long.get('w03')?.actorsCount).to.equal(1);
      for (const [userId, record] of long)
        if (userId !== 'w03') expect(record.changedAt, `${userId} stamped anew`).to.be.at.least(committedAt);

      failRestamps = true;
      const failing = await lateFanOut(3);
      for (const [userId, record] of failing)
        expect(record.changedAt, `${userId} told as written`).to.be.below(committedAt);
    });

    // The records are committed before they are read back: a read that failed then (a lost
    // connection, a server restarting) failed the job, whose retry writes nothing new and so
    // tells nothing, and those members' streams missed the post.
    it('reads the rest back again after a read fails on a lost connection', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `r${String(n).padStart(2, '0')}`);
      await memberships(ids.map((userId) => join('c-reread', userId, 0)));
      let failed = 0;
      const flaky = aroundQueries(tray.pg.pool, async (text, run) => {
        if (typeof text === 'string' && text.includes('FROM tray_memberships WHERE') && failed < 2) {
          failed += 1;
          throw Object.assign(new Error('terminating connection due to administrator command'), {
            code: '57P01',
          });
        }
        return run();
      });
      const writes = createPostgresWrites(flaky, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      await writes.fanOutPosts('c-reread', [post('c-reread', 'r07', 1)], tray.context());
      expect(failed, 'read-back reads that failed').to.equal(2);
      expect(new Set(tray.told.map((record) => record.userId)).size, 'members told').to.equal(24);
    });

    // Its own statement timeout would take as long again on every try, the job's fan-out slot held.
    it('does not read back again after a read times out on its own', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `s${String(n).padStart(2, '0')}`);
      await memberships(ids.map((userId) => join('c-slow', userId, 0)));
      let tried = 0;
      const slow = aroundQueries(tray.pg.pool, async (text, run) => {
        if (typeof text === 'string' && text.includes('FROM tray_memberships WHERE')) {
          tried += 1;
          throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
        }
        return run();
      });
      const writes = createPostgresWrites(slow, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      const failed = await writes.fanOutPosts('c-slow', [post('c-slow', 's07', 1)], tray.context()).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).to.have.property('code', '57014');
      expect(tried, 'read-back reads').to.equal(1);
    });

    // A deleted post of a community of millions changes every member's record: each was held from
    // its statement until the commit (about 800 bytes), with every change the event's detail counts.
    it('holds a bounded number of the records a post’s deletion changed, and reads the rest back to tell them', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `d${String(n).padStart(2, '0')}`);
      await memberships([...ids.map((userId) => join('c-deleted', userId, 0)), leave('c-deleted', 'd21', 1)]);
      const writes = createPostgresWrites(tray.pg.pool, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      const [older, newest] = [post('c-deleted', 'd07', 2), post('c-deleted', 'd13', 3)];
      await writes.fanOutPosts('c-deleted', [older, newest], tray.context());
      const batches: InboxRecord[][] = [];
      await writes.applyRemovals(
        [
          {
            kind: 'post',
            id: newest.lastActionId,
            postId: newest.lastActionId,
            at: at(4),
            communityId: 'c-deleted',
          },
        ],
        {
          ...tray.context(),
          eventKey: 'e-held',
          onWritten: async (records) => {
            batches.push([...records]);
          },
        },
      );
      // Parts are returned until 10 are held: at most 10 + 9 before the commit, never all 22.
      expect(batches[0]?.length, 'records held until the commit').to.be.within(10, 19);
      const told = batches.flat();
      expect(told.length, 'members told twice').to.equal(new Set(told.map((record) => record.userId)).size);
      const stored = [];
      for (const userId of ids)
        stored.push(...(await tray.records.byKeys(userId, [recordKey('post', 'c-deleted', userId)], NOW)));
      // Every member's record names one actor fewer but d13's (its own post is not in it) and
      // d07's (left with none, removed); d21 left before either post.
      const changed = stored.filter((record) => record.userId !== 'd13');
      expect(changed, 'records changed').to.have.lengthOf(22);
      for (const record of changed) expect(record, record.userId).to.deep.include({ actorsCount: 1 });
      expect(
        [...told].sort((a, b) => a.userId.localeCompare(b.userId)),
        'told as stored',
      ).to.deep.equal(changed);
      expect(await createPostgresRemovalOutcomes(tray.pg.pool).outcome('e-held')).to.deep.equal({
        voided: 1,
        shrunk: 22,
        replaced: 0,
        removed: 1,
        listed: 23,
      });
    });

    // The read-back comes after the commit and can fail (a restart, its own timeout); a retry of the
    // job finds nothing left to remove. The deleted records were told after it, so never: open
    // streams kept them, and the removal log that resuming streams read never had them.
    it('tells the records a post’s deletion removed before it reads the rest back, whose failure fails the job', async () => {
      const ids = Array.from({ length: 25 }, (_, n) => `f${String(n).padStart(2, '0')}`);
      await memberships(ids.map((userId) => join('c-lost', userId, 0)));
      const [older, newest] = [post('c-lost', 'f07', 2), post('c-lost', 'f13', 3)];
      await tray.writes.fanOutPosts('c-lost', [older, newest], tray.context());
      const failing = aroundQueries(tray.pg.pool, async (text, run) => {
        if (typeof text === 'string' && text.includes('FROM tray_memberships WHERE'))
          throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
        return run();
      });
      const writes = createPostgresWrites(failing, { membersPerFanOutStatement: 10, recordsHeld: 10 });
      const removed: string[] = [];
      const failed = await writes
        .applyRemovals(
          [
            {
              kind: 'post',
              id: newest.lastActionId,
              postId: newest.lastActionId,
              at: at(4),
              communityId: 'c-lost',
            },
          ],
          {
            ...tray.context(),
            onRemoved: async (records) => {
              removed.push(...records.map((record) => record.userId));
            },
          },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failed, 'the read-back’s failure').to.have.property('code', '57014');
      // f07's record named only f13's post.
      expect(removed).to.deep.equal(['f07']);
    });

    it('stops after a leave and resumes after a rejoin without what happened while away', async () => {
      await memberships([join('c-hike', 'u-ana', 0)]);
      await fanOut([post('c-hike', 'u-cid', 1)]);
      await memberships([leave('c-hike', 'u-ana', 2)]);
      await fanOut([post('c-hike', 'u-dee', 3)]);
      expect((await tray.record('u-ana', 'post', 'c-hike'))?.lastActionId).to.equal('p-u-cid-1');
      await memberships([join('c-hike', 'u-ana', 4)]);
      expect((await tray.record('u-ana', 'post', 'c-hike'))?.lastActionId).to.equal('p-u-cid-1');
      await fanOut([post('c-hike', 'u-eve', 5)]);
      expect((await tray.record('u-ana', 'post', 'c-hike'))?.lastActionId).to.equal('p-u-eve-5');
    });

    it('ignores an older join delivered after a newer leave', async () => {
      await memberships([leave('c-hike', 'u-ana', 2)]);
      await memberships([join('c-hike', 'u-ana', 1)]);
      await fanOut([post('c-hike', 'u-cid', 3)]);
      expect(await tray.record('u-ana', 'post', 'c-hike')).to.equal(undefined);
    });

    it('backfills a late join with the posts inside the membership it opened, once however often redelivered', async () => {
      await fanOut([post('c-hike', 'u-cid', 1), post('c-hike', 'u-dee', 3), post('c-hike', 'u-eve', 6)]);
      await memberships([leave('c-hike', 'u-ana', 5)]);
      await memberships([join('c-hike', 'u-ana', 2)]);
      await memberships([join('c-hike', 'u-ana', 2)]);
      const record = await tray.record('u-ana', 'post', 'c-hike');
      // Eve posted after Ana left: neither added nor named.
      expect(record).to.deep.include({ actorsCount: 1, lastActionId: 'p-u-dee-3', lastUpdate: at(3) });
      expect(names(record)).to.deep.equal(['u-dee']);
      expect(tray.told.filter((told) => told.userId === 'u-ana')).to.have.length(1);
    });

    it('backfills a retried join by the order it was processed in: a leave stored after its first attempt takes nothing back', async () => {
      // The post is kept before either change. Each join (minute 1) is stored and its job fails
      // before its backfill; then the member's leave is stored (Ana's in the join's own
      // millisecond, Bob's at minute 2, both before the post); then the job is retried. A leave
      // processed after the join takes nothing back (docs/tray-rules.md), so the retry must add
      // the post, as the first attempt would have; the retry's fold, which has the leave, has no
      // membership over the post.
      await fanOut([post('c-hike', 'u-cid', 3)]);
      for (const [user, leftAt] of [
        ['u-ana', 1],
        ['u-bob', 2],
      ] as const) {
        let failed = false;
        const failing = aroundQueries(tray.pg.pool, (text, run) => {
          if (!failed && typeof text === 'string' && text.includes('FROM tray_community_posts')) {
            failed = true;
            return Promise.reject(new Error('connection lost before the backfill'));
          }
          return run();
        });
        const attempt = createPostgresWrites(failing).applyMemberships(
          [join('c-hike', user, 1)],
          tray.context(),
        );
        await attempt.then(
          () => expect.fail('the first attempt should fail at its backfill'),
          (error: Error) => expect(error.message).to.equal('connection lost before the backfill'),
        );
        await memberships([leave('c-hike', user, leftAt)]);
        await memberships([join('c-hike', user, 1)]);
        expect(await tray.record(user, 'post', 'c-hike'), user).to.deep.include({
          actorsCount: 1,
          lastActionId: 'p-u-cid-3',
        });
      }
    });

    it('reads no post dated more than a day past the processing of a leave that came after it, when a join is replayed long after', async () => {
      const day = 24 * 60;
      await memberships([join('c-replay', 'u-ana', -20 * day)], at(-20 * day));
      await tray.writes.fanOutPosts(
        'c-replay',
        [post('c-replay', 'u-cid', -19 * day)],
        tray.context(at(-19 * day)),
      );
      await memberships([leave('c-replay', 'u-ana', -18 * day)], at(-18 * day));
      for (const minute of [-10 * day, -day])
        await tray.writes.fanOutPosts(
          'c-replay',
          [post('c-replay', 'u-cid', minute)],
          tray.context(at(minute)),
        );
      const read: number[] = [];
      const observed = aroundQueries(tray.pg.pool, async (text, run) => {
        const result = await run();
        if (
          typeof text === 'string' &&
          /FROM tray_community_posts\s+WHERE community_id = \$1 AND at >= \$2/.test(text)
        )
          read.push(...result.rows.map((row: { at?: string }) => Number(row.at)));
        return result;
      });
      // The join's event replayed now: it keeps its place, before the leave's.
      await createPostgresWrites(observed).applyMemberships(
        [join('c-replay', 'u-ana', -20 * day)],
        tray.context(),
      );
      expect(read, 'the posts the backfill read').to.deep.equal([at(-19 * day)]);
      expect(await tray.record('u-ana', 'post', 'c-replay')).to.deep.include({
        actorsCount: 1,
        lastActionId: `p-u-cid-${-19 * day}`,
      });
    });

    it('backfills a span of more posts than a statement reads, ties on the time included, a page at a time', async () => {
      // 130 posts, 60 of them at one time: a late join reads them BACKFILL_BATCH at a time, not the
      // span whole (a busy community's 90 days would be held in memory per join).
      const posts = Array.from({ length: 130 }, (_, n) => post('c-hike', `u-p${n}`, n < 60 ? 1 : n));
      for (let start = 0; start < posts.length; start += 40) await fanOut(posts.slice(start, start + 40));
      const largest: number[] = [];
      const observed = aroundQueries(tray.pg.pool, async (text, run) => {
        const result = await run();
        if (typeof text === 'string' && /FROM tray_community_posts/.test(text))
          largest.push(result.rowCount ?? 0);
        return result;
      });
      await createPostgresWrites(observed).applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
      const record = await tray.record('u-ana', 'post', 'c-hike');
      expect(record).to.deep.include({ actorsCount: 130, lastActionId: 'p-u-p129-129' });
      expect(largest.length, 'reads of the stored posts').to.be.above(2);
      expect(Math.max(...largest), 'posts read by one statement').to.be.at.most(BACKFILL_BATCH);
    });

    it('gives the same trays whether posts and joins arrive in order or reversed', async () => {
      const changes = [
        join('c-hike', 'u-ana', 0),
        join('c-hike', 'u-bob', 2),
        leave('c-hike', 'u-ana', 4),
        join('c-hike', 'u-ana', 6),
      ];
      const posts = [
        post('c-hike', 'u-cid', 1),
        post('c-hike', 'u-dee', 3),
        post('c-hike', 'u-eve', 5),
        post('c-hike', 'u-cid', 7),
      ];
      for (const change of changes) await memberships([change]);
      for (const one of posts) await fanOut([one]);
      const inOrder = await tray.pg.pool.query('SELECT * FROM tray_records ORDER BY user_id, key');
      await tray.pg.pool.query(
        `TRUNCATE tray_records, tray_target_actors, tray_membership_changes, tray_memberships, tray_member_away,
           tray_community_posts, tray_personal_actions`,
      );
      for (const one of [...posts].reverse()) await fanOut([one]);
      for (const change of [...changes].reverse()) await memberships([change]);
      const reversed = await tray.pg.pool.query('SELECT * FROM tray_records ORDER BY user_id, key');
      const visible = (rows: Record<string, unknown>[]) =>
        rows.map(({ unread_at: _u, changed_at: _c, ...rest }) => rest);
      expect(visible(reversed.rows)).to.deep.equal(visible(inOrder.rows));
      expect(
        inOrder.rows.map((row: { user_id: string; actors_count: number }) => [row.user_id, row.actors_count]),
      ).to.deep.equal([
        // Ana was away when Eve posted.
        ['u-ana', 2],
        ['u-bob', 3],
      ]);
    });
  });

  // A late join's backfill is a fan-out to the joining member alone. Its look-up of leaves
  // processed after each post read every such leave of the community and kept the member's in
  // JavaScript: per post of the backfill, the whole community's churn since, under its post lock.
  describe('a late join beside many late leaves of others', () => {
    it('reads only the joining member’s leaves for the posts it backfills', async () => {
      await tray.writes.fanOutPosts('c-churn', [post('c-churn', 'u-poster', 5)], tray.context());
      // Leaves dated before the post, processed after it: late leavers of it, each of them.
      await tray.writes.applyMemberships(
        Array.from({ length: 40 }, (_, n) => leave('c-churn', `u-left-${n}`, 1)),
        tray.context(),
      );
      const found: number[] = [];
      const observed = aroundClientQueries(tray.pg.pool, async (text, run) => {
        const result = await run();
        const name = (text as { name?: unknown } | undefined)?.name;
        if (typeof name === 'string' && name.startsWith('tray_late_leavers'))
          found.push(result.rowCount ?? 0);
        return result;
      });
      await createPostgresWrites(observed).applyMemberships([join('c-churn', 'u-new', 0)], tray.context());
      expect(found.length, 'late-leaver look-ups of the backfill').to.be.above(0);
      expect(found, 'users each look-up returned').to.deep.equal(found.map(() => 0));
      expect(await tray.record('u-new', 'post', 'c-churn')).to.not.equal(undefined);
    });
  });

  describe('actions kept for leaves and joins processed late', () => {
    const kept = async () =>
      (
        await tray.pg.pool.query<{ user_id: string; target_id: string; actor_id: string; n: number }>(
          `SELECT user_id, target_id, actor_id, count(*)::int AS n FROM tray_personal_actions
           GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        )
      ).rows;

    it('keeps each action on a community’s target once, not those on user feeds nor the recipient’s own', async () => {
      const onFeed = {
        ...comment('p-2', 'u-dee', 1),
        feed: { kind: 'user' as const, id: 'u-ana', name: 'Ana' },
      };
      delete onFeed.communityId;
      await personal([comment('p-1', 'u-cid', 1), comment('p-1', 'u-ana', 2), onFeed]);
      await personal([comment('p-1', 'u-cid', 1)]);
      expect(await kept()).to.deep.equal([{ user_id: 'u-ana', target_id: 'p-1', actor_id: 'u-cid', n: 1 }]);
    });

    it('keeps the newest 16 actions of an actor per record, and what one write adds', async () => {
      for (let minute = 0; minute < 30; minute++) await personal([comment('p-1', 'u-cid', minute)]);
      await personal([comment('p-1', 'u-dee', 0)]);
      expect(await kept()).to.deep.equal([
        { user_id: 'u-ana', target_id: 'p-1', actor_id: 'u-cid', n: 17 },
        { user_id: 'u-ana', target_id: 'p-1', actor_id: 'u-dee', n: 1 },
      ]);
      const oldest = await tray.pg.pool.query<{ at: string }>(
        "SELECT min(at) AS at FROM tray_personal_actions WHERE actor_id = 'u-cid'",
      );
      expect(Number(oldest.rows[0]?.at)).to.equal(at(13));
    });

    it('rewrites a deleted user’s snapshots in the kept actions and posts', async () => {
      await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
      await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 1)], tray.context());
      await personal([comment('p-1', 'u-cid', 1)]);
      await tray.writes.applyProfiles(
        [{ userId: 'u-cid', displayName: 'Cid', deleted: true, at: at(2) }],
        tray.context(),
      );
      const actors = await tray.pg.pool.query<{ actor: unknown }>(
        `SELECT activity->'actor' AS actor FROM tray_personal_actions
         UNION ALL SELECT activity->'actor' FROM tray_community_posts`,
      );
      expect(actors.rows.map((row) => row.actor)).to.deep.equal([
        { userId: 'u-cid', name: 'Deleted user', deleted: true },
        { userId: 'u-cid', name: 'Deleted user', deleted: true },
      ]);
    });
  });

  describe('a post deleted while its fan-out was retried', () => {
    // The kept copy is stored in a transaction of its own before the fan-out. A try that checked the
    // tombstones before a deletion committed, kept the post after it, and failed before its fan-out
    // leaves a copy no deletion will find again: late joins would read it.
    it('drops the kept copy an earlier try left, though the retry fans out nothing', async () => {
      const deleted = post('c-hike', 'u-cid', 1, 'p-retried');
      const next = post('c-hike', 'u-dee', 3, 'p-after-retried');
      const keptCopies = async () =>
        (
          await tray.pg.pool.query(
            "SELECT action_id FROM tray_community_posts WHERE action_id LIKE '%retried' ORDER BY 1",
          )
        ).rows.map((row: { action_id: string }) => row.action_id);
      await tray.writes.applyRemovals(
        [
          {
            kind: 'post',
            id: deleted.lastActionId,
            postId: deleted.lastActionId,
            at: at(2),
            communityId: 'c-hike',
          },
        ],
        tray.context(),
      );
      // What the failed try kept, after the deletion committed (a deletion that finds the kept copy
      // takes it itself).
      await tray.pg.pool.query(
        `INSERT INTO tray_community_posts (community_id, action_id, at, activity, expires_at)
         VALUES ('c-hike', $1, $2, $3, $4)`,
        [deleted.lastActionId, deleted.at, JSON.stringify(deleted), deleted.at + RETENTION_MS],
      );
      expect(await keptCopies()).to.deep.equal([deleted.lastActionId]);
      await tray.writes.fanOutPosts('c-hike', [deleted, next], tray.context());
      expect(await keptCopies()).to.deep.equal([next.lastActionId]);
    });
  });

  describe('a post to a large community', () => {
    it('reaches every member in one statement and tells the live streams at most 1,000 records at a time', async () => {
      const members = Array.from({ length: 2_500 }, (_, index) => ({
        communityId: 'c-big',
        userId: `m${index}`,
        since: at(0),
      }));
      await createPostgresMembersImport(tray.pg.pool).importBatch(members, at(0));
      const batches: number[] = [];
      await tray.writes.fanOutPosts('c-big', [post('c-big', 'm0', 1)], {
        ...tray.context(),
        onWritten: async (records) => {
          batches.push(records.length);
        },
      });
      expect(batches).to.deep.equal([1_000, 1_000, 499]);
      const counted = await tray.pg.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM tray_records WHERE verb = 'post' AND target_id = 'c-big'",
      );
      expect(counted.rows[0]?.n).to.equal(2_499);
    });
  });

  // The fan-out gathered every part's written records with push(...records): past about 120,000
  // arguments V8 throws RangeError, after the transaction committed, so no live stream was told of
  // the post and every such post cost its job an attempt. Tried in a process with a small stack,
  // where 25,000 arguments overflow it: a community of 150,000 in this one took seconds of the
  // suite and, once, stalled it.
  describe('a post to a community too large to spread into one call', () => {
    it('tells every member’s record, each once', async function () {
      this.timeout(60_000);
      const size = 25_000;
      const result = await runCommand(
        process.execPath,
        [
          '--stack-size=150',
          'test/tray-service/storage/postgres/fan-out-in-small-stack.ts',
          tray.pg.url,
          String(size),
        ],
        process.env,
        50_000,
      );
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({ spreadOverflows: true, told: size - 1 });
    });
  });

  describe('an event naming more users than the server has locks for', () => {
    // One advisory lock per user overflowed the server's lock table. A server of the suite's own
    // with few connections keeps the table small (max_locks_per_transaction, 64 by default, per
    // connection slot: between 3,000 and 4,000 advisory locks in one transaction here), so an event
    // of 10,000 users overflows it as 40,000 did the shared test server's 300 connections.
    const server = useStoppablePostgres({ settings: { max_connections: '12' } });
    // Nested, so its database is dropped before the server stops (after hooks run in order).
    describe('on a server with few connections', () => {
      const tray = useTray({ server: () => server.url });
      const MANY = 10_000;
      const users = Array.from({ length: MANY }, (_, index) => `m${index}`);
      const count = async (sql: string) => (await tray.pg.pool.query<{ n: number }>(sql)).rows[0]?.n;

      it(`applies a join of ${MANY} users to one community, and their leave`, async function () {
        this.timeout(120_000);
        await tray.writes.applyMemberships(
          users.map((userId) => join('c-big', userId, 0)),
          tray.context(),
        );
        const open =
          "SELECT count(*)::int AS n FROM tray_memberships WHERE community_id = 'c-big' AND to_at > 0";
        expect(await count(open)).to.equal(MANY);
        await tray.writes.applyMemberships(
          users.map((userId) => leave('c-big', userId, 5)),
          tray.context(),
        );
        expect(await count(`${open} AND to_at > ${at(5)}`)).to.equal(0);
      });

      it(`applies a post mentioning ${MANY} members of its community to each of them`, async function () {
        this.timeout(120_000);
        const mention = (userId: string): Activity => ({
          ...post('c-hike', 'u-ana', 1, 'p-many'),
          verb: 'mention',
          mentionIn: 'post',
          targetType: 'post',
          targetId: 'p-many',
          audience: { kind: 'user', userId },
        });
        await tray.writes.applyPersonal(users.map(mention), tray.context());
        expect(
          await count(
            "SELECT count(*)::int AS n FROM tray_records WHERE verb = 'mention' AND target_id = 'p-many'",
          ),
        ).to.equal(MANY);
      });
    });
  });

  describe('an event naming many users, in transactions of bounded size', () => {
    // Each part locks, writes and commits apart, so a large event never holds every writer's locks
    // (lock-keys.ts: a transaction of many keys locks whole buckets) for its whole length.
    const three = Array.from({ length: 3 * MEMBERS_PER_TRANSACTION }, (_, index) => `m${index}`);
    const last = [...three].sort().at(-1) ?? '';
    const count = async (sql: string, values: unknown[] = []) =>
      (await tray.pg.pool.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;

    /** Holds the one row `sql` selects locked (FOR UPDATE) until the returned release is called. */
    async function holdRow(sql: string, values: unknown[]): Promise<() => Promise<void>> {
      const holder = await tray.pg.pool.connect();
      await holder.query('BEGIN');
      const held = await holder.query(`${sql} FOR UPDATE`, values);
      expect(held.rowCount, 'rows held').to.equal(1);
      return async () => {
        await holder.query('ROLLBACK');
        holder.release();
      };
    }

    it(`stores a join in transactions of ${MEMBERS_PER_TRANSACTION} members: the first commit while a later one waits`, async () => {
      await tray.writes.applyMemberships([join('c-big', last, 0)], tray.context());
      const release = await holdRow(
        "SELECT 1 FROM tray_memberships WHERE community_id = 'c-big' AND user_id = $1",
        [last],
      );
      const joining = tray.writes.applyMemberships(
        three.map((userId) => join('c-big', userId, 1)),
        tray.context(),
      );
      const members = "SELECT count(*)::int AS n FROM tray_memberships WHERE community_id = 'c-big'";
      try {
        await waitFor(async () => (await count(members)) > 1, 5_000, 'the first parts to commit');
      } finally {
        await release();
      }
      await joining;
      expect(await count(members)).to.equal(three.length);
    });

    it(`stores a leave of ${3 * MEMBERS_PER_TRANSACTION} members processed late without changing their records`, async () => {
      await tray.writes.applyMemberships(
        three.map((userId) => join('c-big', userId, 0)),
        tray.context(),
      );
      await tray.writes.fanOutPosts('c-big', [post('c-big', 'u-author', 10)], tray.context());
      const records =
        "SELECT count(*)::int AS n FROM tray_records WHERE verb = 'post' AND target_id = 'c-big'";
      const changed =
        "SELECT max(changed_at)::text AS n FROM tray_records WHERE verb = 'post' AND target_id = 'c-big'";
      expect(await count(records)).to.equal(three.length);
      const before = await count(changed);
      // Delivered late: the post fell in the away time, and stays (a late leave takes nothing back).
      await tray.writes.applyMemberships(
        three.map((userId) => leave('c-big', userId, 5)),
        tray.context(),
      );
      expect(await count(records)).to.equal(three.length);
      expect(await count(changed)).to.equal(before);
      const changes =
        "SELECT count(*)::int AS n FROM tray_membership_changes WHERE community_id = 'c-big' AND NOT joined";
      expect(await count(changes)).to.equal(three.length);
    });

    it(`writes a post mentioning many users in transactions of ${PERSONAL_ACTIVITIES_PER_WRITE} mentions: the first commit while a later one waits`, async () => {
      const mention = (userId: string, author: string, minutes: number): Activity => ({
        ...post('c-hike', author, minutes, 'p-many'),
        verb: 'mention',
        mentionIn: 'post',
        targetType: 'post',
        targetId: 'p-many',
        audience: { kind: 'user', userId },
      });
      const mentioned = Array.from({ length: 3 * PERSONAL_ACTIVITIES_PER_WRITE }, (_, index) => `m${index}`);
      const lastMentioned = mentioned.at(-1) ?? '';
      await personal([mention(lastMentioned, 'u-bob', 0)]);
      const release = await holdRow("SELECT 1 FROM tray_records WHERE user_id = $1 AND verb = 'mention'", [
        lastMentioned,
      ]);
      const writing = personal(mentioned.map((userId) => mention(userId, 'u-ana', 1)));
      const records =
        "SELECT count(*)::int AS n FROM tray_records WHERE verb = 'mention' AND target_id = 'p-many'";
      try {
        await waitFor(async () => (await count(records)) > 1, 5_000, 'the first parts to commit');
      } finally {
        await release();
      }
      await writing;
      expect(await count(records)).to.equal(mentioned.length);
    });
  });

  describe('a deleted user', () => {
    it('shows as `Deleted user` without images in every record, loses their tray and their memberships', async () => {
      await tray.writes.applyMemberships(
        [join('c-hike', 'u-cid', 0), join('c-hike', 'u-ana', 0)],
        tray.context(),
      );
      await personal([comment('p-1', 'u-cid', 1), comment('p-2', 'u-ana', 1, 'u-cid')]);
      await tray.writes.applyProfiles(
        [{ userId: 'u-cid', displayName: 'Cid', deleted: true, at: at(2) }],
        tray.context(NOW + 5),
      );
      const record = await tray.record('u-ana', 'comment', 'p-1');
      expect(record?.actors).to.deep.equal([
        { userId: 'u-cid', name: 'Deleted user', deleted: true, at: at(1) },
      ]);
      expect(record?.changedAt).to.equal(NOW + 5);
      expect(await tray.records.count('u-cid', NOW)).to.equal(0);
      await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-bob', 3)], tray.context());
      expect(await tray.record('u-cid', 'post', 'c-hike')).to.equal(undefined);
      // Records computed later from the group name them as deleted too.
      await personal([comment('p-1', 'u-dee', 4)]);
      expect((await tray.record('u-ana', 'comment', 'p-1'))?.actors[1]).to.deep.equal({
        userId: 'u-cid',
        name: 'Deleted user',
        deleted: true,
        at: at(1),
      });
    });

    // As a removal's: stamped at the job's start, the records a deletion renamed after waiting
    // behind a write of their group landed outside a live stream's settle window.
    it('stamps the renamed records with the write clock once the writers of their groups are done', async () => {
      await personal([comment('p-del', 'u-cid', 1)]);
      const released = await releasedWhileWriting(groupLock('comment', 'p-del'), (jobStart) =>
        tray.writes.applyProfiles([{ userId: 'u-cid', displayName: 'Cid', deleted: true, at: at(2) }], {
          ...tray.context(jobStart),
          clock: Date.now,
        }),
      );
      const record = await tray.record('u-ana', 'comment', 'p-del', Date.now());
      expect(record?.actors[0]?.name).to.equal('Deleted user');
      expect(record?.changedAt, 'changedAt').to.be.at.least(released);
    });

    it('keeps names as snapshots on a plain rename', async () => {
      await personal([comment('p-1', 'u-cid', 1)]);
      await tray.writes.applyProfiles(
        [{ userId: 'u-cid', displayName: 'Cid 2', deleted: false, at: at(2) }],
        tray.context(),
      );
      expect((await tray.record('u-ana', 'comment', 'p-1'))?.actors[0]?.name).to.equal('U-CID');
    });
  });

  describe('under concurrency', () => {
    /**
     * A community whose member u-rj left and came back, so their `post` record counts its actors
     * exactly, from the kept posts; its first post is u-a's, `firstPost`, at minute 1.
     */
    async function withRejoinedMember(community: string, firstPost: string): Promise<void> {
      const context = tray.context();
      await tray.writes.applyMemberships([join(community, 'u-rj', 0)], context);
      await tray.writes.fanOutPosts(community, [post(community, 'u-a', 1, firstPost)], context);
      await tray.writes.applyMemberships([leave(community, 'u-rj', 2)], context);
      await tray.writes.applyMemberships([join(community, 'u-rj', 3)], context);
    }
    /** u-rj's `post` record of the community (actors newest first, count), and its kept posts. */
    async function rejoinedOutcome(community: string) {
      const record = await tray.record('u-rj', 'post', community);
      const kept = await tray.pg.pool.query<{ action_id: string }>(
        'SELECT action_id FROM tray_community_posts WHERE community_id = $1 ORDER BY action_id',
        [community],
      );
      return {
        record: { actors: names(record), count: record?.actorsCount },
        kept: kept.rows.map((row) => row.action_id),
      };
    }

    it('counts no post deleted while its fan-out starts: the deletion commits between the fan-out reading the tombstones and keeping the post', async () => {
      // The post p-race-2 is deleted by another process just before it is kept.
      const community = 'c-race';
      const context = tray.context();
      await withRejoinedMember(community, 'p-race-1');
      const deleter = createPostgresWrites(tray.pg.pool);
      let deleted = false;
      // The fan-out's pool: before it keeps the post, the deletion runs to its commit.
      const racing = aroundQueries(tray.pg.pool, async (text, run) => {
        if (!deleted && typeof text === 'string' && text.includes('INSERT INTO tray_community_posts')) {
          deleted = true;
          await deleter.applyRemovals(
            [{ kind: 'post', id: 'p-race-2', postId: 'p-race-2', at: at(4) + 1 }],
            context,
          );
        }
        return run();
      });
      await createPostgresWrites(racing).fanOutPosts(
        community,
        [post(community, 'u-b', 4, 'p-race-2')],
        context,
      );
      expect(deleted, 'the deletion ran inside the fan-out').to.equal(true);
      await tray.writes.fanOutPosts(community, [post(community, 'u-d', 5, 'p-race-3')], context);
      expect(await rejoinedOutcome(community)).to.deep.equal({
        record: { actors: ['u-d', 'u-a'], count: 2 },
        kept: ['p-race-1', 'p-race-3'],
      });
    });

    /**
     * The writes of the tray on a pool that, once the fan-out's keep of the posts has committed
     * (their places taken), runs `between` to its end before anything else of the fan-out, and
     * `beforeKeep` (if any) just before that keep: the interleaving made certain.
     */
    function writesWithStepAfterKeep(between: () => Promise<void>, beforeKeep?: () => Promise<void>) {
      let ran = false;
      const pool = aroundQueries(tray.pg.pool, async (text, run) => {
        const keep = !ran && typeof text === 'string' && text.includes('INSERT INTO tray_community_posts');
        if (keep) await beforeKeep?.();
        const result = await run();
        if (keep) {
          ran = true;
          await between();
        }
        return result;
      });
      return { writes: createPostgresWrites(pool), ran: () => ran };
    }

    for (const batch of [false, true])
      it(`reaches a member whose leave is stored between ${batch ? 'a batch’s' : 'a post’s'} keep and its fan-out: the post came first, the leave takes nothing back`, async () => {
        const community = batch ? 'c-keep-batch' : 'c-keep-one';
        const context = tray.context();
        await tray.writes.applyMemberships(
          [join(community, 'u-ana', 0), join(community, 'u-bob', 0)],
          context,
        );
        // Ana's leave at 1 covers the posts at 2 and 3, and is processed after they took their places.
        const racing = writesWithStepAfterKeep(() =>
          tray.writes.applyMemberships([leave(community, 'u-ana', 1)], context),
        );
        const posts = batch
          ? [post(community, 'u-cid', 2), post(community, 'u-dee', 3)]
          : [post(community, 'u-cid', 2)];
        await racing.writes.fanOutPosts(community, posts, context);
        expect(racing.ran(), 'the leave ran between the keep and the fan-out').to.equal(true);
        const expected = batch ? ['u-dee', 'u-cid'] : ['u-cid'];
        for (const member of ['u-ana', 'u-bob']) {
          const record = await tray.record(member, 'post', community);
          expect({ actors: names(record), count: record?.actorsCount }, member).to.deep.equal({
            actors: expected,
            count: expected.length,
          });
        }
        // A post processed after the leave and dated in the time away reaches Bob alone.
        await tray.writes.fanOutPosts(community, [post(community, 'u-eve', 4)], context);
        expect((await tray.record('u-ana', 'post', community))?.actorsCount).to.equal(expected.length);
        expect((await tray.record('u-bob', 'post', community))?.actorsCount).to.equal(expected.length + 1);
      });

    // A post kept before its own fan-out, then deleted while that fan-out waits: another post's
    // fan-out counts the kept copy exactly (for a member who left and came back), before or after
    // the deletion committed; nothing took it out again, for as long as the community stayed quiet.
    const orders = [
      'another post, then the deletion',
      'the deletion, then another post',
      'the deletion before the keep, another post after it',
    ];
    for (const [index, order] of orders.entries())
      it(`counts no post deleted while its own fan-out waits after its keep (${order})`, async () => {
        const community = `c-kept-del-${index}`;
        const context = tray.context();
        await withRejoinedMember(community, `${community}-p1`);
        const deleted = `${community}-p2`;
        const removal = () => {
          return tray.writes.applyRemovals(
            [{ kind: 'post', id: deleted, postId: deleted, at: at(6), communityId: community }],
            context,
          );
        };
        const another = () =>
          tray.writes.fanOutPosts(community, [post(community, 'u-d', 5, `${community}-p3`)], context);
        const racing =
          index === 2
            ? writesWithStepAfterKeep(another, async () => {
                await removal();
              })
            : writesWithStepAfterKeep(async () => {
                if (index === 0) {
                  await another();
                  await removal();
                } else {
                  await removal();
                  await another();
                }
              });
        await racing.writes.fanOutPosts(community, [post(community, 'u-b', 4, deleted)], context);
        expect(racing.ran(), 'the steps ran between the keep and the fan-out').to.equal(true);
        expect(await rejoinedOutcome(community)).to.deep.equal({
          record: { actors: ['u-d', 'u-a'], count: 2 },
          kept: [`${community}-p1`, `${community}-p3`],
        });
      });

    it('reaches, on redelivery, a member whose leave was processed after the post’s keep and before the fan-out that failed', async () => {
      const community = 'c-keep-fail';
      const context = tray.context();
      await tray.writes.applyMemberships([join(community, 'u-ana', 0)], context);
      // The worker stops after keeping the post (its place taken), before its fan-out; Ana's leave
      // covering the post is processed meanwhile; the job is then retried.
      const failing = writesWithStepAfterKeep(() => Promise.reject(new Error('the worker stopped')));
      const first = post(community, 'u-cid', 2);
      const stopped = await failing.writes.fanOutPosts(community, [first], context).then(
        () => 'fanned out',
        (error: unknown) => (error as Error).message,
      );
      expect(stopped).to.equal('the worker stopped');
      expect(await tray.record('u-ana', 'post', community)).to.equal(undefined);
      await tray.writes.applyMemberships([leave(community, 'u-ana', 1)], context);
      await tray.writes.fanOutPosts(community, [first], tray.context(NOW + 1));
      const record = await tray.record('u-ana', 'post', community);
      expect({ actors: names(record), count: record?.actorsCount }).to.deep.equal({
        actors: ['u-cid'],
        count: 1,
      });
    });

    it('keeps a post from a member whose leave took its place before the post’s keep and commits after the post’s fan-out began: the leave came first', async () => {
      const community = 'c-leave-stalled';
      const context = tray.context();
      await tray.writes.applyMemberships([join(community, 'u-ana', 0), join(community, 'u-bob', 0)], context);
      // Ana's leave at 1 stops once inserted (its place taken, not yet committed): another
      // connection holds her memberships row, which the leave's refold rewrites.
      const holder = new pg.Client({ connectionString: tray.pg.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(
          'SELECT 1 FROM tray_memberships WHERE community_id = $1 AND user_id = $2 FOR UPDATE',
          [community, 'u-ana'],
        );
        const leaving = tray.writes.applyMemberships([leave(community, 'u-ana', 1)], context);
        const waitingOn = (kind: string, query: string) => async () =>
          (
            await tray.pg.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND wait_event = $1 AND query LIKE $2`,
              [kind, query],
            )
          ).rowCount === 1;
        await waitFor(
          waitingOn('transactionid', 'DELETE FROM tray_memberships%'),
          5_000,
          'the leave to stop',
        );
        // A post at 2, kept (its place after the leave's) and fanned out meanwhile: it either ends,
        // or waits for the leave to commit.
        let ended = false;
        const fanning = tray.writes
          .fanOutPosts(community, [post(community, 'u-cid', 2)], context)
          .finally(() => {
            ended = true;
          });
        await waitFor(
          async () => ended || (await waitingOn('advisory', '%')()),
          5_000,
          'the fan-out to end or wait for the leave',
        );
        await holder.query('COMMIT');
        await leaving;
        await fanning;
      } finally {
        await holder.end();
      }
      // By the places the leave came first and covers the post: it reaches Bob alone, as every
      // later computation of Ana's record would judge.
      expect(await tray.record('u-ana', 'post', community)).to.equal(undefined);
      expect(names(await tray.record('u-bob', 'post', community))).to.deep.equal(['u-cid']);
    });

    /**
     * Runs `write` while another connection holds the row lock on `heldUser`'s records, so the
     * write's records upsert stops at that row (written in key order, before `deletedUser`'s) after
     * its snapshot read `deletedUser`'s record; delete-all of `deletedUser` then commits, the lock
     * goes, and the write goes on to `deletedUser`'s row: an interleaving made certain, not hoped for.
     */
    async function deleteAllDuring(write: () => Promise<unknown>, heldUser: string, deletedUser: string) {
      const holder = new pg.Client({ connectionString: tray.pg.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM tray_records WHERE user_id = $1 FOR UPDATE', [heldUser]);
        const writing = write();
        const waiting = async () =>
          (
            await tray.pg.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND query LIKE '-- tray: grouped upsert%'`,
            )
          ).rowCount === 1;
        await waitFor(waiting, 5_000, 'the records upsert to wait for the held row');
        expect(await tray.records.deleteAll(deletedUser)).to.equal(1);
        await holder.query('COMMIT');
        await writing;
      } finally {
        await holder.end();
      }
    }

    it('re-creates no record deleted by delete-all while a fan-out that read it is on its way to it (it would count the deleted actors)', async () => {
      const community = 'c-hike';
      const context = tray.context();
      await tray.writes.applyMemberships(
        ['u-ana', 'u-bob', 'u-zed'].map((member) => join(community, member, 0)),
        context,
      );
      await tray.writes.fanOutPosts(community, [post(community, 'u-dee', 1)], context);
      tray.told.length = 0;
      await deleteAllDuring(
        () => tray.writes.fanOutPosts(community, [post(community, 'u-cid', 2)], context),
        'u-ana',
        'u-zed',
      );
      // The write ordered first, then delete-all: no record (a record counting only u-cid's post
      // would be right too, but the deleted one's u-dee never).
      const record = await tray.record('u-zed', 'post', community);
      const found = record && { actors: names(record), count: record.actorsCount };
      expect(found, `u-zed's record came back: ${JSON.stringify(found)}`).to.equal(undefined);
      expect(tray.told.map((told) => told.userId)).to.deep.equal(['u-ana', 'u-bob']);
      expect(names(await tray.record('u-bob', 'post', community))).to.deep.equal(['u-cid', 'u-dee']);
    });

    it('re-creates no record deleted by delete-all while a personal write that read it is on its way to it (nor its newer latest action)', async () => {
      await personal([
        comment('p-0', 'u-cid', 1, 'u-aaa'),
        comment('p-1', 'u-cid', 1),
        comment('p-1', 'u-dee', 5),
      ]);
      tray.told.length = 0;
      // u-eve's comment is older than the deleted record's latest (u-dee's).
      await deleteAllDuring(
        () => personal([comment('p-0', 'u-eve', 3, 'u-aaa'), comment('p-1', 'u-eve', 3)]),
        'u-aaa',
        'u-ana',
      );
      const record = await tray.record('u-ana', 'comment', 'p-1');
      const found = record && { actors: names(record), count: record.actorsCount, last: record.lastActionId };
      expect(found, `u-ana's record came back: ${JSON.stringify(found)}`).to.equal(undefined);
      expect(tray.told.map((told) => told.userId)).to.deep.equal(['u-aaa']);
    });

    /**
     * Runs `write` while another connection holds the row lock on `heldUser`'s records, so the
     * write's records upsert stops there after its snapshot read `deletedUser` as not deleted; then
     * deletes `deletedUser` and lets the write go on only once the deletion waits for it (its
     * group's lock): the write commits after the deletion stored the profile and rewrote the
     * snapshots, which must still end with nothing of theirs and no old name.
     */
    async function deleteUserDuring(write: () => Promise<unknown>, heldUser: string, deletedUser: string) {
      const holder = new pg.Client({ connectionString: tray.pg.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM tray_records WHERE user_id = $1 FOR UPDATE', [heldUser]);
        const writing = write();
        const waitingOn = (event: string | null, query: string) => async () =>
          (
            await tray.pg.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND ($1::text IS NULL OR wait_event = $1) AND query LIKE $2`,
              [event, query],
            )
          ).rowCount === 1;
        await waitFor(
          waitingOn(null, '-- tray: grouped upsert%'),
          5_000,
          'the write to wait for the held row',
        );
        const deleting = tray.writes.applyProfiles(
          [{ userId: deletedUser, displayName: 'Deleted user', deleted: true, at: at(10) }],
          tray.context(NOW + 1),
        );
        await waitFor(
          waitingOn('advisory', '%pg_advisory_xact_lock_shared%'),
          5_000,
          'the deletion to wait for the write',
        );
        await holder.query('COMMIT');
        await Promise.all([writing, deleting]);
      } finally {
        await holder.end();
      }
    }

    it('leaves nothing in a deleted user’s tray when a fan-out that read them as a member writes after the deletion', async () => {
      const community = 'c-hike';
      const context = tray.context();
      await tray.writes.applyMemberships([join(community, 'u-ana', 0)], context);
      await tray.writes.fanOutPosts(community, [post(community, 'u-dee', 1)], context);
      // u-cid joins after that post: the next post makes them a new record.
      await tray.writes.applyMemberships([join(community, 'u-cid', 2)], context);
      await deleteUserDuring(
        () => tray.writes.fanOutPosts(community, [post(community, 'u-bob', 3)], context),
        'u-ana',
        'u-cid',
      );
      expect(await tray.records.count('u-cid', NOW + 1)).to.equal(0);
      expect(names(await tray.record('u-ana', 'post', community))).to.deep.equal(['u-bob', 'u-dee']);
    });

    it('names a deleted user `Deleted user` in a record a write computed from its group before the deletion and made after it', async () => {
      await personal([comment('p-1', 'u-cid', 1), comment('p-0', 'u-eve', 1, 'u-aaa')]);
      // u-ana's record goes; u-dee's older comment then makes it again, counting u-cid.
      await tray.records.deleteAll('u-ana');
      await deleteUserDuring(
        () => personal([comment('p-0', 'u-eve', 3, 'u-aaa'), comment('p-1', 'u-dee', 0)]),
        'u-aaa',
        'u-cid',
      );
      expect((await tray.record('u-ana', 'comment', 'p-1', NOW + 1))?.actors).to.deep.equal([
        { userId: 'u-cid', name: 'Deleted user', deleted: true, at: at(1) },
        { userId: 'u-dee', name: 'U-DEE', imageUrl: 'https://img/u-dee', at: at(0) },
      ]);
    });

    it('leaves one record written by 8 writers at once equal to the serial result', async () => {
      const authors = Array.from({ length: 8 }, (_, index) => `u-w${index}`);
      const concurrentWrites = createPostgresWrites(tray.pg.pool);
      await Promise.all(
        authors.map((author, index) =>
          concurrentWrites.applyPersonal([comment('p-hot', author, index)], tray.context()),
        ),
      );
      const concurrent = await tray.record('u-ana', 'comment', 'p-hot');
      await tray.pg.pool.query('TRUNCATE tray_records, tray_target_actors');
      for (const [index, author] of authors.entries()) await personal([comment('p-hot', author, index)]);
      const serial = await tray.record('u-ana', 'comment', 'p-hot');
      // changedAt aside: each write on the same clock stamps a millisecond past the last
      // (nextChangedAt), and concurrent calls may be written together, in fewer writes.
      expect({ ...concurrent, changedAt: 0 }).to.deep.equal({ ...serial, changedAt: 0 });
      expect(concurrent?.changedAt).to.be.within(NOW, NOW + 7);
      expect(serial?.changedAt).to.equal(NOW + 7);
      expect(serial?.actorsCount).to.equal(8);
    });

    it('writes concurrent calls together at the latest of their clocks, each call told only of its own records', async () => {
      const writes = createPostgresWrites(tray.pg.pool);
      const told = new Map<string, string[]>();
      const call = (owner: string, authors: string[], now: number) =>
        writes.applyPersonal(
          authors.map((author, index) => comment(`p-${owner}`, author, index, owner)),
          {
            ...tray.context(now),
            onWritten: async (records) => {
              told.set(owner, [...(told.get(owner) ?? []), ...records.map((record) => record.userId)]);
            },
          },
        );
      await Promise.all([
        call('u-ana', ['u-cid', 'u-dee'], NOW + 1),
        call('u-bob', ['u-cid'], NOW + 3),
        call('u-eve', ['u-eve'], NOW + 2),
      ]);
      expect(Object.fromEntries(told)).to.deep.equal({ 'u-ana': ['u-ana'], 'u-bob': ['u-bob'] });
      expect(await tray.record('u-ana', 'comment', 'p-u-ana')).to.deep.include({
        actorsCount: 2,
        unreadAt: NOW + 3,
      });
      expect(await tray.record('u-bob', 'comment', 'p-u-bob')).to.deep.include({
        actorsCount: 1,
        unreadAt: NOW + 3,
      });
    });

    it('fails only the call the server rejects when concurrent calls are written together', async () => {
      const writes = createPostgresWrites(tray.pg.pool);
      // Not a whole number of milliseconds: the bigint column refuses it.
      const rejected = { ...comment('p-2', 'u-dee', 1), at: at(1) + 0.5 };
      const results = await Promise.allSettled([
        writes.applyPersonal([comment('p-1', 'u-cid', 1)], tray.context()),
        writes.applyPersonal([rejected], tray.context()),
        writes.applyPersonal([comment('p-3', 'u-eve', 1)], tray.context()),
      ]);
      expect(results.map((result) => result.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect(await tray.record('u-ana', 'comment', 'p-1')).to.not.equal(undefined);
      expect(await tray.record('u-ana', 'comment', 'p-2')).to.equal(undefined);
      expect(await tray.record('u-ana', 'comment', 'p-3')).to.not.equal(undefined);
    });
  });
});

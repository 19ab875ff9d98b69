import { expect } from 'chai';
import {
  EVENTS,
  MEMBERSHIP_CHANGES,
  TRAY_MUTES,
  TRAY_RECORD_CLAIMS,
  TRAY_REMOVALS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
  TRAY_TARGET_ACTORS,
  USER_PROFILES,
} from '../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { Document, Filter, UpdateFilter } from 'mongodb';
import { deletedActor } from '../../../../tray-service/domain/deleted-user.ts';
import { purgeKeptActions } from '../../../../tray-service/storage/mongodb/grouping/purge-kept-actions.ts';
import { renameKeptActor } from '../../../../tray-service/storage/mongodb/grouping/target-actions.ts';
import { renameGroupActor } from '../../../../tray-service/storage/mongodb/grouping/target-actors.ts';
import type { UserProfileDoc } from '../../../../tray-service/storage/mongodb/collections/user-profiles-collection.ts';
import { withCollectionMethod } from '../../../support/with-collection-method.ts';
import { purgeExpired } from '../../../../tray-service/storage/mongodb/purge-expired.ts';
import { purgeEndedMutes } from '../../../../tray-service/storage/mongodb/mutes/purge-ended-mutes.ts';
import { recordGroup } from '../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import { useMongo } from '../../../support/suite-resources.ts';
import type { MembershipChangeDoc } from '../../../../tray-service/storage/mongodb/collections/membership-changes-collection.ts';

describe('purgeExpired', () => {
  const mongo = useMongo();

  // A worker of before the processing time, still running during a rolling upgrade, stores joins
  // and leaves without one after the upgrade's pass ran: never pruned, and a late leave's span
  // read as open-ended. Each purge gives them its time, as the pass gave the older ones.
  describe('with membership changes an older worker stored without a processing time', () => {
    it('gives each the purge’s time, and leaves those that have one', async () => {
      const now = new Date();
      const changes = mongo.db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
      const change = (at: number, processedAt?: number): MembershipChangeDoc => ({
        _id: JSON.stringify(['c-purge', 'u-ana', at, at === 1]),
        communityId: 'c-purge',
        userId: 'u-ana',
        member: JSON.stringify(['c-purge', 'u-ana']),
        joined: at === 1,
        at,
        processed: 0,
        ...(processedAt === undefined ? {} : { processedAt }),
      });
      await changes.insertMany([change(1, 42), change(2)]);
      await purgeExpired(mongo.db, now);
      const stored = await changes
        .find({ communityId: 'c-purge' }, { projection: { _id: 0, at: 1, processedAt: 1 } })
        .sort({ at: 1 })
        .toArray();
      expect(stored).to.deep.equal([
        { at: 1, processedAt: 42 },
        { at: 2, processedAt: now.getTime() },
      ]);
    });
  });

  describe('with records, events, group actors and claims past and before their expiry', () => {
    it('deletes every one whose expiresAt has passed, also a minute ago, and says how many records and events went', async () => {
      const now = new Date();
      const at = (ms: number) => new Date(now.getTime() + ms);
      for (const collection of [TRAY_RECORDS, EVENTS, TRAY_TARGET_ACTORS, TRAY_RECORD_CLAIMS]) {
        // Each group actor in a group of its own: it is its group's newest.
        await mongo.db.collection(collection).insertMany(
          [
            { _id: 'days-ago', expiresAt: at(-3 * 86_400_000) },
            { _id: 'minute-ago', expiresAt: at(-60_000) },
            { _id: 'now', expiresAt: now },
            { _id: 'later', expiresAt: at(1) },
          ].map((doc) => ({ ...doc, _id: doc._id as never, group: doc._id })),
        );
      }
      expect(await purgeExpired(mongo.db, now)).to.deep.equal({ records: 3, events: 3 });
      for (const collection of [TRAY_RECORDS, EVENTS, TRAY_TARGET_ACTORS, TRAY_RECORD_CLAIMS])
        expect(await mongo.db.collection(collection).distinct('_id'), collection).to.deep.equal(['later']);
      expect(await purgeExpired(mongo.db, now)).to.deep.equal({ records: 0, events: 0 });
    });
  });

  // Kept actions live as long as a record built from them can (docs/storage.md): a group's go
  // once its newest actor expired, and a live group's expired ones move to its expiry, so the
  // purge neither grows storage for ever nor reads the same kept documents again every hour.
  describe('with group actors and kept actions of a group that is over and of one that lives', () => {
    it("deletes the first group's, moves the live group's expired ones to its newest actor's expiry", async () => {
      const now = new Date();
      const at = (days: number) => new Date(now.getTime() + days * 86_400_000);
      const docs = [
        { _id: 'over-ben', group: 'over', expiresAt: at(-20) },
        { _id: 'over-cy', group: 'over', expiresAt: at(-1) },
        { _id: 'live-ben', group: 'live', expiresAt: at(-20) },
        { _id: 'live-cy', group: 'live', expiresAt: at(-1) },
        { _id: 'live-dee', group: 'live', expiresAt: at(30) },
      ];
      for (const collection of [TRAY_TARGET_ACTORS, TRAY_TARGET_ACTIONS])
        await mongo.db
          .collection(collection)
          .insertMany(docs.map((doc) => ({ ...doc, _id: doc._id as never })));
      await purgeExpired(mongo.db, now);
      for (const collection of [TRAY_TARGET_ACTORS, TRAY_TARGET_ACTIONS]) {
        const left = await mongo.db
          .collection(collection)
          .find({}, { sort: { _id: 1 } })
          .toArray();
        expect(
          left.map((doc) => [doc._id, doc.group, (doc.expiresAt as Date).getTime()]),
          collection,
        ).to.deep.equal(['live-ben', 'live-cy', 'live-dee'].map((id) => [id, 'live', at(30).getTime()]));
      }
      await purgeExpired(mongo.db, at(31));
      for (const collection of [TRAY_TARGET_ACTORS, TRAY_TARGET_ACTIONS])
        expect(await mongo.db.collection(collection).countDocuments({}), collection).to.equal(0);
    });
  });

  // An ended span still holds back what it covered while a record of its owner that counts from
  // before its end lives (docs/storage.md): it moves to that record's expiry, and goes once no
  // such record lives.
  describe("with ended mute spans, one inside its owner's live record", () => {
    it("moves that one to the expiry of the owner's records that count from before its end, deletes the others", async () => {
      const now = new Date();
      const day = (n: number) => now.getTime() + n * 86_400_000;
      await mongo.db.collection(TRAY_RECORDS).insertMany([
        { _id: 'r-ana' as never, userId: 'u-ana', countFrom: day(-100), expiresAt: new Date(day(70)) },
        { _id: 'r-ana-new' as never, userId: 'u-ana', countFrom: day(-2), expiresAt: new Date(day(88)) },
      ]);
      const span = (id: string, userId: string, end: number) => ({
        _id: id as never,
        userId,
        until: null,
        removedAt: end,
        expiresAt: new Date(end + 90 * 86_400_000),
      });
      await mongo.db.collection(TRAY_MUTES).insertMany([
        span('inside', 'u-ana', day(-95)), // Ana's record from day -100 judges it
        span('before', 'u-ana', day(-101)), // ended before any of her records counts from
        span('nobody', 'u-zed', day(-95)), // no record at all
      ]);
      await purgeExpired(mongo.db, now);
      const left = async () =>
        (await mongo.db.collection(TRAY_MUTES).find({}).toArray()).map((doc) => [
          doc._id,
          (doc.expiresAt as Date).getTime(),
        ]);
      expect(await left()).to.deep.equal([['inside', day(70)]]);
      await purgeExpired(mongo.db, new Date(day(71)));
      expect(await left()).to.deep.equal([]);
    });
  });

  // Each expired span read its owner's records on its own: a user's thousand ended spans read
  // their tray a thousand times in one round.
  describe('with many ended mute spans of one user', () => {
    it("reads the owner's records once a round, and judges each span as before", async () => {
      const now = new Date();
      const day = (n: number) => now.getTime() + n * 86_400_000;
      await mongo.db.collection(TRAY_RECORDS).insertMany([
        { _id: 'r-old' as never, userId: 'u-many', countFrom: day(-100), expiresAt: new Date(day(70)) },
        { _id: 'r-mid' as never, userId: 'u-many', countFrom: day(-97), expiresAt: new Date(day(80)) },
        { _id: 'r-new' as never, userId: 'u-many', countFrom: day(-2), expiresAt: new Date(day(88)) },
      ]);
      const span = (id: string, end: number) => ({
        _id: id as never,
        userId: 'u-many',
        until: end,
        removedAt: null,
        expiresAt: new Date(end + 90 * 86_400_000),
      });
      await mongo.db
        .collection(TRAY_MUTES)
        .insertMany([
          ...Array.from({ length: 200 }, (_, n) => span(`s-${String(n).padStart(3, '0')}`, day(-98))),
          span('after-mid', day(-96)),
          span('before-all', day(-101)),
        ]);
      let reads = 0;
      const counted = withCollectionMethod(mongo.db, TRAY_RECORDS, 'find', (find) => {
        return ((...args: Parameters<typeof find>) => {
          reads += 1;
          return find(...args);
        }) as typeof find;
      });
      await purgeEndedMutes(counted, now);
      expect(reads, "reads of the owner's records").to.equal(1);
      const left = new Map(
        (await mongo.db.collection(TRAY_MUTES).find({}).toArray()).map((doc) => [
          String(doc._id),
          (doc.expiresAt as Date).getTime(),
        ]),
      );
      // Ended on day -98: only the record from day -100 counts from before it; on day -96, the one
      // from day -97 too, which lives longer.
      expect(left.size).to.equal(201);
      expect(left.get('s-000')).to.equal(day(70));
      expect(left.get('s-199')).to.equal(day(70));
      expect(left.get('after-mid')).to.equal(day(80));
      expect(left.has('before-all')).to.equal(false);
    });
  });

  // A tombstone voids what arrives after it as long as something could take that action again
  // (docs/storage.md): its post's thread keeps actions, or a deleted post's community's post group
  // lives. Then it moves to their expiry; else it goes.
  describe('with expired tombstones, one on a live thread and one of a post in a live community', () => {
    it('moves those two to the expiry of what could take their actions again, deletes the others', async () => {
      const now = new Date();
      const at = (days: number) => new Date(now.getTime() + days * 86_400_000);
      await mongo.db.collection(TRAY_TARGET_ACTIONS).insertMany([
        { _id: 'a-1' as never, group: 'g-thread', postId: 'p-live', expiresAt: at(40) },
        { _id: 'a-2' as never, group: 'g-thread', postId: 'p-live', expiresAt: at(60) },
      ]);
      // The community's post group: its newest actor's expiry.
      await mongo.db
        .collection(TRAY_TARGET_ACTORS)
        .insertOne({ _id: 'c-live-actor' as never, group: recordGroup('post', 'c-live'), expiresAt: at(50) });
      const tombstone = (id: string, kind: string, postId: string, communityId?: string) => ({
        _id: id as never,
        kind,
        id,
        postId,
        at: at(-100).getTime(),
        expiresAt: at(-10),
        ...(communityId ? { communityId } : {}),
      });
      await mongo.db
        .collection(TRAY_REMOVALS)
        .insertMany([
          tombstone('cm-on-live', 'comment', 'p-live'),
          tombstone('p-in-live', 'post', 'p-in-live', 'c-live'),
          tombstone('cm-on-over', 'comment', 'p-over'),
          tombstone('p-in-over', 'post', 'p-in-over', 'c-over'),
          tombstone('p-on-feed', 'post', 'p-on-feed'),
        ]);
      await purgeExpired(mongo.db, now);
      const left = async () =>
        (
          await mongo.db
            .collection(TRAY_REMOVALS)
            .find({}, { sort: { _id: 1 } })
            .toArray()
        ).map((doc) => [doc._id, (doc.expiresAt as Date).getTime()]);
      expect(await left()).to.deep.equal([
        ['cm-on-live', at(60).getTime()],
        ['p-in-live', at(50).getTime()],
      ]);
      await purgeExpired(mongo.db, at(61));
      expect(await left()).to.deep.equal([]);
    });
  });

  // FerretDB writes each document an update matches back whole, as it read it. A user deleted
  // while the purge moved their group's expired actions had their rename undone by the move, and
  // records computed later from the group named them again: a deletion must be final.
  describe('moving a live group’s expired actions while their actor is being deleted', () => {
    const now = new Date();
    const at = (days: number) => new Date(now.getTime() + days * 86_400_000);
    // The move as FerretDB runs it: read, then (the deletion's rename landing meanwhile) the
    // documents read written back with the new expiry.
    const interleaved = (name: string, userId: string) => {
      let moved = false;
      return withCollectionMethod(
        mongo.db,
        name,
        'updateMany',
        (original) =>
          (async (filter: Filter<Document>, update: UpdateFilter<Document>) => {
            // The move only: the renames the purge may run after it are the real ones.
            if (moved) return original(filter, update);
            moved = true;
            const read = await mongo.db.collection(name).find(filter).toArray();
            await mongo.db
              .collection<UserProfileDoc>(USER_PROFILES)
              .insertOne({ _id: userId, displayName: '', deleted: true, updatedAt: now.getTime() });
            await renameGroupActor(mongo.db, deletedActor(userId));
            await renameKeptActor(mongo.db, deletedActor(userId));
            for (const doc of read)
              await mongo.db.collection(name).replaceOne({ _id: doc._id }, { ...doc, ...update.$set });
            return {
              acknowledged: true,
              matchedCount: read.length,
              modifiedCount: read.length,
              upsertedCount: 0,
              upsertedId: null,
            };
          }) as unknown as typeof original,
      );
    };
    const named = (userId: string) => ({ userId, name: 'Real Name', profileImage: 'https://img/real.png' });
    const liveActor = {
      _id: 'alive' as never,
      actor: { userId: 'u-alive', name: 'Alive' },
      at: 2,
      actionId: 'a-2',
      expiresAt: at(30),
    };

    it('names them as deleted in the group actors afterwards', async () => {
      await mongo.db.collection(TRAY_TARGET_ACTORS).insertMany([
        { ...liveActor, _id: 'race-1-alive' as never, group: 'race-1' },
        {
          _id: 'race-1-gone' as never,
          group: 'race-1',
          actor: named('u-gone-1'),
          at: 1,
          actionId: 'a-1',
          expiresAt: at(-1),
        },
      ]);
      await purgeKeptActions(interleaved(TRAY_TARGET_ACTORS, 'u-gone-1'), TRAY_TARGET_ACTORS, now);
      const moved = await mongo.db.collection(TRAY_TARGET_ACTORS).findOne({ _id: 'race-1-gone' as never });
      expect(moved?.expiresAt).to.deep.equal(at(30));
      expect(moved?.actor).to.deep.equal(deletedActor('u-gone-1'));
    });

    it('names them as deleted in the kept actions afterwards', async () => {
      await mongo.db
        .collection(TRAY_TARGET_ACTORS)
        .insertOne({ ...liveActor, _id: 'race-2-alive' as never, group: 'race-2' });
      await mongo.db.collection(TRAY_TARGET_ACTIONS).insertOne({
        _id: 'race-2-gone' as never,
        group: 'race-2',
        activity: { actor: named('u-gone-2') },
        expiresAt: at(-1),
      });
      await purgeKeptActions(interleaved(TRAY_TARGET_ACTIONS, 'u-gone-2'), TRAY_TARGET_ACTIONS, now);
      const moved = await mongo.db.collection(TRAY_TARGET_ACTIONS).findOne({ _id: 'race-2-gone' as never });
      expect(moved?.expiresAt).to.deep.equal(at(30));
      expect(moved?.activity).to.deep.equal({ actor: deletedActor('u-gone-2') });
    });
  });
});

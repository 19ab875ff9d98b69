import { expect } from 'chai';
import {
  MEMBERSHIPS,
  MEMBERSHIP_CHANGES,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  membershipId,
  type MembershipDoc,
  membershipsCollection,
} from '../../../../../tray-service/storage/mongodb/collections/memberships-collection.ts';
import type { MembershipChange } from '../../../../../tray-service/domain/activity.ts';
import { membershipChangesCollection } from '../../../../../tray-service/storage/mongodb/collections/membership-changes-collection.ts';
import {
  applyMembershipChanges,
  communityIntervals,
  endMemberships,
  MEMBER_POINT_READS,
  memberChangesFingerprint,
  memberSpans,
  membersChangesFingerprints,
  membersSpans,
} from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { isMemberAt } from '../../../../../tray-service/domain/membership-intervals.ts';
import type { Db } from 'mongodb';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const DAY = 86_400_000;

/** The users whose folded intervals make them members at `at`. */
async function postRecipients(db: Db, communityId: string, at: number): Promise<string[]> {
  const intervals = await communityIntervals(db, communityId);
  return [...intervals].filter(([, spans]) => isMemberAt(spans, at)).map(([userId]) => userId);
}
const now = Date.parse('2026-11-20T12:00:00.000Z');
const retention = { retentionDays: 90, now };

describe('the membership store (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [membershipChangesCollection, membershipsCollection]));
  const change = (communityId: string, userId: string, active: boolean, at: number): MembershipChange => ({
    communityId,
    userId,
    active,
    at,
  });

  it('folds joins and leaves stored concurrently, in any order, into the same intervals', async () => {
    const changes = [0, 10, 20, 30, 40, 50].map((minute, n) =>
      change('c-con', 'u-ana', n % 2 === 0, now - DAY + minute * 60_000),
    );
    // Every change three times at once: redeliveries and retries racing the originals.
    await Promise.all(
      [...changes, ...[...changes].reverse(), ...changes].map((one) =>
        applyMembershipChanges(mongo.db, [one], retention),
      ),
    );
    expect((await communityIntervals(mongo.db, 'c-con')).get('u-ana')).to.deep.equal([
      { from: now - DAY, to: now - DAY + 10 * 60_000 },
      { from: now - DAY + 20 * 60_000, to: now - DAY + 30 * 60_000 },
      { from: now - DAY + 40 * 60_000, to: now - DAY + 50 * 60_000 },
    ]);
    expect(await mongo.db.collection(MEMBERSHIP_CHANGES).countDocuments({ communityId: 'c-con' })).to.equal(
      6,
    );
  });

  /** Stores `one` as the tray processing it at `processedAt`. */
  const processedAt = (one: MembershipChange, at: number) =>
    applyMembershipChanges(mongo.db, [one], { retentionDays: 90, now: at });
  const storedAts = async (communityId: string) =>
    (
      await mongo.db
        .collection(MEMBERSHIP_CHANGES)
        .find({ communityId }, { projection: { _id: 0, at: 1 } })
        .toArray()
    )
      .map((doc) => (now - Number(doc.at)) / DAY)
      .sort((a, b) => b - a);

  it('prunes a member’s changes that decide nothing past the retention, keeping the state', async () => {
    for (const [active, days] of [
      [true, 200],
      [false, 150],
      [true, 100],
    ] as const)
      await processedAt(change('c-old', 'u-ben', active, now - days * DAY), now - days * DAY);
    // The join of 200 days ago goes; the leave after it and the join of 100 days ago (the state at
    // the cutoff, 90 days ago) stay.
    await processedAt(change('c-old', 'u-ben', false, now - DAY), now);
    expect(await storedAts('c-old')).to.deep.equal([150, 100, 1]);
    expect(await postRecipients(mongo.db, 'c-old', now - 2 * DAY)).to.deep.equal(['u-ben']);
    expect(await postRecipients(mongo.db, 'c-old', now)).to.deep.equal([]);
  });

  it('keeps the join before a leave processed late, within a day of the cutoff or later', async () => {
    await processedAt(change('c-late', 'u-ben', true, now - 200 * DAY), now - 200 * DAY);
    await processedAt(change('c-late', 'u-ben', true, now - 180 * DAY), now - 180 * DAY);
    // Dated 150 days ago, processed 89 days ago: after any action of the last 90 days it precedes.
    await processedAt(change('c-late', 'u-ben', false, now - 150 * DAY), now - 89 * DAY);
    await processedAt(change('c-late', 'u-ben', true, now - 100 * DAY), now - 89 * DAY);
    await processedAt(change('c-late', 'u-ben', true, now - DAY), now);
    // Only the older of the two joins before the leave goes: the newer lets in all the older did.
    expect(await storedAts('c-late')).to.deep.equal([180, 150, 100, 1]);
  });

  it('reads imported memberships as a join at `since` (and a leave at `updatedAt` when inactive)', async () => {
    const imported: MembershipDoc[] = [
      {
        _id: membershipId('c-imp', 'u-cid'),
        communityId: 'c-imp',
        userId: 'u-cid',
        active: true,
        since: now - 5 * DAY,
        updatedAt: now - 5 * DAY,
      },
      {
        _id: membershipId('c-imp', 'u-dee'),
        communityId: 'c-imp',
        userId: 'u-dee',
        active: false,
        since: now - 5 * DAY,
        updatedAt: now - 2 * DAY,
      },
    ];
    await mongo.db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(imported);
    expect((await postRecipients(mongo.db, 'c-imp', now - 3 * DAY)).sort()).to.deep.equal(['u-cid', 'u-dee']);
    expect(await postRecipients(mongo.db, 'c-imp', now - DAY)).to.deep.equal(['u-cid']);
    await applyMembershipChanges(mongo.db, [change('c-imp', 'u-cid', false, now - DAY - 1)], retention);
    expect(await postRecipients(mongo.db, 'c-imp', now - DAY)).to.deep.equal([]);
  });

  it('lets an imported list override a leave stored before its as-of time, not one after it', async () => {
    await applyMembershipChanges(mongo.db, [change('c-list', 'u-fay', true, now - 10 * DAY)], retention);
    await applyMembershipChanges(mongo.db, [change('c-list', 'u-fay', false, now - 8 * DAY)], retention);
    await applyMembershipChanges(mongo.db, [change('c-list', 'u-gus', true, now - 10 * DAY)], retention);
    await applyMembershipChanges(mongo.db, [change('c-list', 'u-gus', false, now - 4 * DAY)], retention);
    // The list, taken 6 days ago, names both as members since 10 days ago.
    const asOf = now - 6 * DAY;
    await mongo.db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(
      ['u-fay', 'u-gus'].map((userId) => ({
        _id: membershipId('c-list', userId),
        communityId: 'c-list',
        userId,
        active: true,
        since: now - 10 * DAY,
        updatedAt: asOf,
      })),
    );
    expect(await postRecipients(mongo.db, 'c-list', now - 7 * DAY)).to.deep.equal(['u-gus']);
    expect((await postRecipients(mongo.db, 'c-list', now - 5 * DAY)).sort()).to.deep.equal([
      'u-fay',
      'u-gus',
    ]);
    expect(await postRecipients(mongo.db, 'c-list', now)).to.deep.equal(['u-fay']);
  });

  it('reads many members’ spans and changes with their community, as each one’s own read would', async () => {
    const userIds = Array.from({ length: MEMBER_POINT_READS + 4 }, (_, n) => `u-b${n}`);
    await applyMembershipChanges(
      mongo.db,
      userIds.flatMap((userId, n) => [
        change('c-batch', userId, true, now - 10 * DAY),
        ...(n % 3 === 0 ? [change('c-batch', userId, false, now - 5 * DAY)] : []),
      ]),
      retention,
    );
    await mongo.db.collection<MembershipDoc>(MEMBERSHIPS).insertOne({
      _id: membershipId('c-batch', 'u-imported'),
      communityId: 'c-batch',
      userId: 'u-imported',
      active: true,
      since: now - 3 * DAY,
      updatedAt: now - 3 * DAY,
    });
    const wanted = new Set([...userIds, 'u-imported', 'u-none']);
    const spans = await membersSpans(mongo.db, 'c-batch', wanted);
    const fingerprints = await membersChangesFingerprints(mongo.db, 'c-batch', wanted);
    expect(spans.size).to.equal(wanted.size);
    for (const userId of wanted) {
      expect(spans.get(userId), userId).to.deep.equal(await memberSpans(mongo.db, 'c-batch', userId));
      expect(fingerprints.get(userId), userId).to.equal(
        await memberChangesFingerprint(mongo.db, 'c-batch', userId),
      );
    }
  });

  it('prunes the old changes of many members stored at once, as of one', async () => {
    const userIds = Array.from({ length: MEMBER_POINT_READS + 4 }, (_, n) => `u-p${n}`);
    const at = (days: number) => now - days * DAY;
    for (const [active, days] of [
      [true, 200],
      [true, 150],
      [true, 100],
    ] as const)
      await applyMembershipChanges(
        mongo.db,
        userIds.map((userId) => change('c-prune', userId, active, at(days))),
        { retentionDays: 90, now: at(days) },
      );
    await applyMembershipChanges(
      mongo.db,
      userIds.map((userId) => change('c-prune', userId, false, at(1))),
      retention,
    );
    // Of each, the join 100 days ago (the state at the cutoff, 90 days ago, and it lets in all the
    // older joins did) and the new leave are left.
    const left = await mongo.db
      .collection(MEMBERSHIP_CHANGES)
      .find({ communityId: 'c-prune' }, { projection: { _id: 0, userId: 1, at: 1 } })
      .toArray();
    expect(left).to.have.length(2 * userIds.length);
    expect(left.every((doc) => doc.at === at(100) || doc.at === at(1))).to.equal(true);
  });

  it('ends a deleted user’s memberships in every community, imported ones included', async () => {
    await applyMembershipChanges(mongo.db, [change('c-del1', 'u-eve', true, now - 3 * DAY)], retention);
    await mongo.db.collection<MembershipDoc>(MEMBERSHIPS).insertOne({
      _id: membershipId('c-del2', 'u-eve'),
      communityId: 'c-del2',
      userId: 'u-eve',
      active: true,
      since: now - 3 * DAY,
      updatedAt: now - 3 * DAY,
    });
    await endMemberships(mongo.db, ['u-eve'], now - DAY, now);
    for (const communityId of ['c-del1', 'c-del2']) {
      expect(await postRecipients(mongo.db, communityId, now - 2 * DAY), communityId).to.deep.equal([
        'u-eve',
      ]);
      expect(await postRecipients(mongo.db, communityId, now), communityId).to.deep.equal([]);
    }
  });
});

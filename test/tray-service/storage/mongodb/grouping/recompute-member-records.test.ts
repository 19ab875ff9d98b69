import { expect } from 'chai';
import {
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/writes/fan-out-posts.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { recomputeMemberRecords } from '../../../../../tray-service/storage/mongodb/grouping/recompute-member-records.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aComment, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { claimFor } from '../support/claim-for.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

describe('recomputeMemberRecords (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const records = () => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);

  /** Stores a user's join (true) or leave (false) in a community at a minute of the day. */
  const membership = (communityId: string, userId: string) => (active: boolean, minute: number) =>
    applyMembershipChanges(mongo.db, [{ communityId, userId, active, at: at(minute) }], {
      retentionDays: 90,
      now: NOW,
    });

  /**
   * A member's `post` record of a community whose only post came after their leave, processed
   * before the post though the post's fan-out did not see it (a race: the post's place is made
   * later than the leave's here): the next recomputation leaves it with no action, so it is to be
   * deleted. Returns its key and version.
   */
  async function emptiedByALeave(
    communityId: string,
    userId: string,
  ): Promise<{ key: string; version: number }> {
    const member = membership(communityId, userId);
    await member(true, 0);
    await fanOutCommunityPosts(
      mongo.db,
      communityId,
      [aPost('u-cid', { id: `p-${communityId}`, at: at(5), communityId })],
      options,
    );
    const key = recordKey('post', communityId, userId);
    const record = await records().findOne({ _id: key });
    if (!record) throw new Error('the post reached no record');
    await member(false, 2);
    await mongo.db
      .collection(TRAY_TARGET_ACTIONS)
      .updateMany(
        { 'activity.lastActionId': `p-${communityId}` },
        { $set: { processed: Number.MAX_SAFE_INTEGER } },
      );
    return { key, version: record.version };
  }

  it('deletes a record left with no action once it may claim its next version; a claim that holds it unmoved fails the job after 60 rounds without progress, backing off longer each round', async () => {
    const { key, version } = await emptiedByALeave('c-hike', 'u-ana');
    // Another writer holds the record's next version and never writes it.
    await claimFor(mongo.db, 'another-job', key, version + 1);
    const waits: number[] = [];
    const backOff = (round: number) => {
      waits.push(round);
      return Promise.resolve();
    };
    await expect(
      recomputeMemberRecords(mongo.db, 'c-hike', 'u-ana', { ...options, backOff }),
    ).to.be.rejectedWith(`tray record ${key} still contended after 60 rounds without progress`);
    expect(waits).to.deep.equal(Array.from({ length: 60 }, (_, index) => index + 1));
    expect(await records().findOne({ _id: key })).to.include({ lastActionId: 'p-c-hike', version });
    await mongo.db
      .collection<{ _id: string }>(TRAY_RECORD_CLAIMS)
      .deleteOne({ _id: `${key}#${version + 1}` });
    await recomputeMemberRecords(mongo.db, 'c-hike', 'u-ana', { ...options, backOff });
    expect(await records().findOne({ _id: key })).to.equal(null);
  });

  it('computes again, after its writes, the records its first round wrote when a join was stored before a later round', async () => {
    const communityId = 'c-back';
    const member = membership(communityId, 'u-ana');
    await member(true, 0);
    // u-ana's post record counts posts at minutes 1 and 5; her comment record comments at 1 and 5.
    await fanOutCommunityPosts(
      mongo.db,
      communityId,
      [
        aPost('u-cid', { id: 'p-early', at: at(1), communityId }),
        aPost('u-dee', { id: 'p-late', at: at(5), communityId }),
      ],
      options,
    );
    const own = { postId: 'p-ana', owner: 'u-ana' };
    await applyPersonalActivities(
      mongo.db,
      [
        aComment('u-eve', own, { id: 'cm-early', at: at(1), communityId }),
        aComment('u-fay', own, { id: 'cm-late', at: at(5), communityId }),
      ],
      options,
    );
    const postKey = recordKey('post', communityId, 'u-ana');
    const commentKey = recordKey('comment', 'p-ana', 'u-ana');
    const comments = await records().findOne({ _id: commentKey });
    if (!comments) throw new Error('the comments made no record');
    // She leaves at minute 3; a concurrent writer holds her comment record, so the recomputation
    // takes a second round for it.
    await member(false, 3);
    await claimFor(mongo.db, 'another-job', commentKey, comments.version + 1);
    let rounds = 0;
    await recomputeMemberRecords(mongo.db, communityId, 'u-ana', {
      ...options,
      // After the first round wrote the post record without p-late: her rejoin at minute 4 is
      // stored, its backfill having read that record before the write (p-late was still there),
      // and the other writer moves the comment record.
      onWritten: async (written) => {
        if (rounds++ > 0) return;
        expect(written.map((record) => record._id)).to.deep.equal([postKey]);
        expect(written[0]).to.include({ actorsCount: 1 });
        await member(true, 4);
        await records().updateOne(
          { _id: commentKey, version: comments.version },
          { $set: { version: comments.version + 1 } },
        );
      },
    });
    // Back from minute 4: p-late (minute 5) counts again.
    expect(await records().findOne({ _id: postKey })).to.include({ actorsCount: 2, lastActionId: 'p-late' });
    expect(await records().findOne({ _id: commentKey })).to.include({ actorsCount: 2 });
  });

  it('keeps deleting a record a concurrent writer moves every round, for more than 60 rounds, and deletes it once the writer stops', async () => {
    const { key, version } = await emptiedByALeave('c-busy', 'u-bea');
    // The concurrent writer always holds the version after the record's current one (claimed before
    // it writes the current one), so every claim of the deletion is lost while the record moves.
    let current = version;
    await claimFor(mongo.db, 'busy-writer', key, current + 1);
    const move = async () => {
      await claimFor(mongo.db, 'busy-writer', key, current + 2);
      const moved = await records().updateOne(
        { _id: key, version: current },
        { $set: { version: current + 1, changedAt: NOW } },
      );
      expect(moved.modifiedCount).to.equal(1);
      current += 1;
    };
    const MOVES = 80;
    const waits: number[] = [];
    const backOff = async (round: number) => {
      waits.push(round);
      if (waits.length <= MOVES) await move();
      // The writer stops: its claim of the next version goes, and the deletion's next claim wins.
      else
        await mongo.db
          .collection<{ _id: string }>(TRAY_RECORD_CLAIMS)
          .deleteOne({ _id: `${key}#${current + 1}` });
    };
    await recomputeMemberRecords(mongo.db, 'c-busy', 'u-bea', { ...options, backOff });
    expect(current).to.equal(version + MOVES);
    expect(await records().findOne({ _id: key })).to.equal(null);
    // Each round saw the record move: the back-off never grew.
    expect(waits.length).to.equal(MOVES + 1);
    expect(new Set(waits)).to.deep.equal(new Set([1]));
  });
});

import { expect } from 'chai';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aComment, aMention } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { claimFor } from '../support/claim-for.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

describe('applyPersonalActivities (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const records = () => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);

  it('keeps the record its first round wrote when a leave is stored between two of its compare-and-set rounds, after the action was kept', async () => {
    // One job, two deliveries: a mention of u-ben in c-race (a new record), and a comment on
    // u-cid's feed post, whose record a concurrent writer holds, so the job needs a second round.
    const feedPost = { postId: 'p-feed', owner: 'u-cid' };
    await applyPersonalActivities(
      mongo.db,
      [aComment('u-ana', feedPost, { id: 'cm-1', at: at(1), userFeed: 'u-cid' })],
      options,
    );
    const feedKey = recordKey('comment', 'p-feed', 'u-cid');
    const feedRecord = await records().findOne({ _id: feedKey });
    if (!feedRecord) throw new Error('the first comment made no record');
    await claimFor(mongo.db, 'another-job', feedKey, feedRecord.version + 1);
    const mention = aMention(
      'u-eve',
      'u-ben',
      { in: 'post', postId: 'p-race' },
      { at: at(4), communityId: 'c-race' },
    );
    const mentionKey = recordKey('mention', 'p-race', 'u-ben');
    let rounds = 0;
    await applyPersonalActivities(
      mongo.db,
      [aComment('u-dee', feedPost, { id: 'cm-2', at: at(3), userFeed: 'u-cid' }), mention],
      {
        ...options,
        // After the first round wrote the mention (and lost the feed record's claim): u-ben's leave
        // at minute 2 is stored, its own recomputation having read before that write and found
        // nothing, and the other writer moves the feed record, so the second round takes it.
        onWritten: async (written) => {
          if (rounds++ > 0) return;
          expect(written.map((record) => record._id)).to.deep.equal([mentionKey]);
          await applyMembershipChanges(
            mongo.db,
            [{ communityId: 'c-race', userId: 'u-ben', active: false, at: at(2) }],
            { retentionDays: 90, now: NOW },
          );
          await records().updateOne(
            { _id: feedKey, version: feedRecord.version },
            { $set: { version: feedRecord.version + 1 } },
          );
        },
      },
    );
    expect(rounds, 'rounds that wrote').to.equal(2);
    expect(await records().findOne({ _id: feedKey })).to.include({ actorsCount: 2, lastActionId: 'cm-2' });
    // The mention was processed before the leave (kept first): the leave takes nothing back.
    expect(await records().findOne({ _id: mentionKey })).to.include({ actorsCount: 1 });
  });
});

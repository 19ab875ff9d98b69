import { expect } from 'chai';
import {
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
} from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/records/tray-records-collection.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/grouping/fan-out-posts.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { recomputeMemberRecords } from '../../../../../tray-service/storage/mongodb/grouping/recompute-member-records.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/tray-collections.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

describe('recomputeMemberRecords (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));

  it('deletes a record left with no action once it may claim its next version; a held claim fails the job for a retry', async function () {
    this.timeout(30_000);
    const member = (active: boolean, minute: number) =>
      applyMembershipChanges(mongo.db, [{ communityId: 'c-hike', userId: 'u-ana', active, at: at(minute) }], {
        retentionDays: 90,
        now: NOW,
      });
    await member(true, 0);
    await fanOutCommunityPosts(mongo.db, 'c-hike', [aPost('u-cid', { id: 'p-5', at: at(5) })], options);
    const key = recordKey('post', 'c-hike', 'u-ana');
    const records = mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
    const record = await records.findOne({ _id: key });
    expect(record).to.include({ lastActionId: 'p-5' });
    // A leave before the only post, while another writer holds the record's next version.
    await member(false, 2);
    await mongo.db.collection(TRAY_RECORD_CLAIMS).insertOne({
      _id: `${key}#${(record?.version ?? 0) + 1}` as never,
      owner: 'another-job',
      state: 'theirs',
      claimedAt: new Date(),
      expiresAt: new Date(NOW + 86_400_000),
      expiresDay: '2026-11-22',
    });
    await expect(recomputeMemberRecords(mongo.db, 'c-hike', 'u-ana', options)).to.be.rejectedWith(
      /still contended/,
    );
    expect(await records.findOne({ _id: key })).to.include({ lastActionId: 'p-5' });
    await mongo.db.collection(TRAY_RECORD_CLAIMS).deleteMany({});
    await recomputeMemberRecords(mongo.db, 'c-hike', 'u-ana', options);
    expect(await records.findOne({ _id: key })).to.equal(null);
  });
});

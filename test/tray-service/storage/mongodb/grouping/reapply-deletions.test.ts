import { expect } from 'chai';
import { KeyedLock } from '../../../../../shared/async/keyed-lock.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import {
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
  USER_PROFILES,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { applyProfileChanges } from '../../../../../tray-service/storage/mongodb/grouping/apply-profile-changes.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/writes/fan-out-posts.ts';
import { reapplyDeletions } from '../../../../../tray-service/storage/mongodb/grouping/reapply-deletions.ts';
import type { TargetActionDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actions-collection.ts';
import type { UserProfileDoc } from '../../../../../tray-service/storage/mongodb/collections/user-profiles-collection.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aComment, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

/**
 * The in-process lock a write takes right before it writes its records: here it first runs `before`
 * once, so a deletion lands after the write looked its users up and before its records land, an
 * interleaving made certain.
 */
class LockRunningFirst extends KeyedLock {
  #before: (() => Promise<void>) | undefined;

  constructor(before: () => Promise<void>) {
    super();
    this.#before = before;
  }

  override async run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const before = this.#before;
    this.#before = undefined;
    if (before) await before();
    return super.run(keys, work);
  }
}

// A deletion stored while a write ran (docs/tray-rules.md#deleted-users): what the write left of the
// deleted user goes after it. What a deletion does to every tray is the conformance suite's
// (deleted-users-cases.ts), against the reference tray.
describe('reapplyDeletions (MongoDB-compatible server)', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const records = () => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const deleteUser = (userId: string) =>
    applyProfileChanges(mongo.db, [{ userId, displayName: 'Deleted user', deleted: true, at: at(10) }], {
      owner: 'job-delete',
      now: () => NOW,
    });

  it('removes the record a personal write made for a user deleted after it looked them up', async () => {
    const comment = aComment('u-ana', { postId: 'p-1', owner: 'u-xena' }, { id: 'cm-1', at: at(1) });
    await applyPersonalActivities(mongo.db, [comment], {
      ...options,
      lock: new LockRunningFirst(() => deleteUser('u-xena')),
    });
    expect(await records().countDocuments({ userId: 'u-xena' })).to.equal(0);
  });

  it('removes the record a fan-out made for a member deleted after it looked the members up', async () => {
    await applyMembershipChanges(
      mongo.db,
      ['u-ana', 'u-yuri'].map((userId) => ({ communityId: 'c-fan', userId, active: true, at: at(0) })),
      { retentionDays: 90, now: NOW },
    );
    await fanOutCommunityPosts(
      mongo.db,
      'c-fan',
      [aPost('u-ana', { id: 'p-fan', at: at(1), communityId: 'c-fan' })],
      {
        ...options,
        lock: new LockRunningFirst(() => deleteUser('u-yuri')),
      },
    );
    expect(await records().countDocuments({ userId: 'u-yuri' })).to.equal(0);
  });

  it('names a user deleted meanwhile `Deleted user` in what a write kept and wrote of them', async () => {
    const comment = aComment(
      'u-zoe',
      { postId: 'p-2', owner: 'u-ana' },
      {
        id: 'cm-2',
        at: at(1),
        name: 'Zoe',
        imageUrl: 'https://img/zoe',
      },
    );
    await applyPersonalActivities(mongo.db, [comment], options);
    // The deletion stored the profile, and its rewrite had read before this write landed.
    await mongo.db
      .collection<UserProfileDoc>(USER_PROFILES)
      .insertOne({ _id: 'u-zoe', displayName: 'Deleted user', deleted: true, updatedAt: at(10) });
    await reapplyDeletions(mongo.db, new Set(['u-zoe', 'u-ana']), options);
    const record = await records().findOne({ _id: recordKey('comment', 'p-2', 'u-ana') });
    expect(record?.actors).to.deep.equal([
      { userId: 'u-zoe', name: 'Deleted user', deleted: true, at: at(1) },
    ]);
    const kept = await mongo.db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .findOne({ 'activity.lastActionId': 'cm-2' });
    expect(kept?.activity.actor).to.deep.equal({ userId: 'u-zoe', name: 'Deleted user', deleted: true });
  });
});

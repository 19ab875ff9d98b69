import { expect } from 'chai';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import {
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
  TRAY_TARGET_ACTORS,
} from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/grouping/apply-personal-activities.ts';
import { applyProfileChanges } from '../../../../../tray-service/storage/mongodb/grouping/apply-profile-changes.ts';
import { migrateDeletedMark } from '../../../../../tray-service/storage/mongodb/grouping/migrate-deleted-mark.ts';
import type { TargetActionDoc } from '../../../../../tray-service/storage/mongodb/grouping/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../../../../../tray-service/storage/mongodb/grouping/tray-target-actors-collection.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/records/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/tray-collections.ts';
import { aComment } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

// Snapshots a deletion rewrote before they carried the `deleted` mark (docs/messages.md#deleted-users).
describe('migrateDeletedMark (MongoDB-compatible server)', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));

  it("marks a deleted user's snapshots written without the mark, once, and not a live user called 'Deleted user'", async () => {
    const post = { postId: 'p-1', owner: 'u-ana' };
    await applyPersonalActivities(
      mongo.db,
      [
        aComment('u-cid', post, { id: 'cm-1', at: at(1), name: 'Cid' }),
        aComment('u-dee', post, { id: 'cm-2', at: at(2), name: 'Deleted user' }),
      ],
      options,
    );
    await applyProfileChanges(
      mongo.db,
      [{ userId: 'u-cid', displayName: 'Deleted user', deleted: true, at: at(3) }],
      { owner: 'job-delete', now: () => NOW },
    );
    // As a deletion stored them before the mark: the name only (FerretDB has no `$[]`, so the
    // record is replaced whole).
    const unmarked = { userId: 'u-cid', name: 'Deleted user' };
    await mongo.db
      .collection<TargetActorDoc>(TRAY_TARGET_ACTORS)
      .updateMany({ 'actor.userId': 'u-cid' }, { $set: { actor: unmarked } });
    await mongo.db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .updateMany({ 'activity.actor.userId': 'u-cid' }, { $set: { 'activity.actor': unmarked } });
    const records = mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
    const key = recordKey('comment', 'p-1', 'u-ana');
    const record = await records.findOne({ _id: key });
    await records.updateOne(
      { _id: key },
      { $set: { actors: (record?.actors ?? []).map(({ deleted: _mark, ...actor }) => actor) } },
    );

    expect(await migrateDeletedMark(mongo.db)).to.equal(1);
    const marked = (await records.findOne({ _id: key }))?.actors;
    expect(marked?.map((actor) => [actor.userId, actor.name, actor.deleted ?? false])).to.deep.equal([
      ['u-dee', 'Deleted user', false],
      ['u-cid', 'Deleted user', true],
    ]);
    const groupActor = await mongo.db
      .collection<TargetActorDoc>(TRAY_TARGET_ACTORS)
      .findOne({ 'actor.userId': 'u-cid' });
    expect(groupActor?.actor).to.include({ deleted: true });
    const kept = await mongo.db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .findOne({ 'activity.actor.userId': 'u-cid' });
    expect(kept?.activity.actor).to.include({ deleted: true });
    // Once per database.
    expect(await migrateDeletedMark(mongo.db)).to.equal(0);
  });
});

import { expect } from 'chai';
import type { CommandStartedEvent, Db, Document } from 'mongodb';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import {
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
  TRAY_TARGET_ACTORS,
  TRAY_MIGRATIONS,
  USER_PROFILES,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { applyProfileChanges } from '../../../../../tray-service/storage/mongodb/grouping/apply-profile-changes.ts';
import { migrateDeletedMark } from '../../../../../tray-service/storage/mongodb/grouping/migrate-deleted-mark.ts';
import type { TargetActionDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actors-collection.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
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

  // On FerretDB no filter on an actor's path is pushed down: each is a full read of its
  // collection, so the pass reads each collection once for all the deleted users, not once per
  // user (which took hours on a large database), and rewrites what it found by _id.
  it('marks several deleted users among live actors, reading each collection once for all of them', async () => {
    await mongo.db.collection(TRAY_MIGRATIONS).deleteMany({});
    const post = { postId: 'p-2', owner: 'u-ana' };
    const gone = ['u-g1', 'u-g2', 'u-g3', 'u-g4', 'u-g5'];
    await applyPersonalActivities(
      mongo.db,
      [
        aComment('u-g1', post, { id: 'cm-21', at: at(11), name: 'G1' }),
        aComment('u-eve', post, { id: 'cm-22', at: at(12), name: 'Eve' }),
        aComment('u-g2', post, { id: 'cm-23', at: at(13), name: 'G2' }),
        ...gone
          .slice(2)
          .map((userId, index) =>
            aComment(
              userId,
              { postId: `p-${userId}`, owner: 'u-bob' },
              { id: `cm-${userId}`, at: at(14 + index) },
            ),
          ),
        aComment(
          'u-dee',
          { postId: 'p-u-g3', owner: 'u-bob' },
          { id: 'cm-24', at: at(20), name: 'Deleted user' },
        ),
      ],
      options,
    );
    await applyProfileChanges(
      mongo.db,
      gone.map((userId) => ({ userId, displayName: 'Deleted user', deleted: true, at: at(21) })),
      { owner: 'job-delete', now: () => NOW },
    );
    await unmark(mongo.db, gone);

    const scans: Document[] = [];
    const listen = (event: CommandStartedEvent) => {
      const filters =
        event.commandName === 'find'
          ? [event.command.filter as Document]
          : event.commandName === 'update'
            ? (event.command.updates as Document[]).map((update) => update.q as Document)
            : [];
      for (const filter of filters)
        if (
          Object.keys(filter ?? {}).some((path) => path.endsWith('actor.userId') || path === 'actors.userId')
        )
          scans.push({ [event.commandName]: event.command[event.commandName] as string, filter });
    };
    mongo.client.on('commandStarted', listen);
    try {
      expect(await migrateDeletedMark(mongo.db)).to.equal(
        await mongo.db.collection(USER_PROFILES).countDocuments({ deleted: true }),
      );
    } finally {
      mongo.client.off('commandStarted', listen);
    }
    expect(scans.map((scan) => Object.values(scan)[0])).to.have.members([
      TRAY_RECORDS,
      TRAY_TARGET_ACTORS,
      TRAY_TARGET_ACTIONS,
    ]);

    const records = mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
    const actors = async (postId: string, owner: string) =>
      (await records.findOne({ _id: recordKey('comment', postId, owner) }))?.actors.map(
        (actor) => `${actor.userId} ${actor.name} ${actor.deleted ?? false}`,
      );
    expect(await actors('p-2', 'u-ana')).to.have.members([
      'u-g1 Deleted user true',
      'u-eve Eve false',
      'u-g2 Deleted user true',
    ]);
    expect(await actors('p-u-g3', 'u-bob')).to.have.members([
      'u-g3 Deleted user true',
      'u-dee Deleted user false',
    ]);
    for (const userId of gone.slice(3))
      expect(await actors(`p-${userId}`, 'u-bob')).to.deep.equal([`${userId} Deleted user true`]);
    const unmarked = (name: string, path: string) =>
      mongo.db
        .collection(name)
        .countDocuments({ [`${path}.userId`]: { $in: gone }, [`${path}.deleted`]: { $ne: true } });
    expect(await unmarked(TRAY_TARGET_ACTORS, 'actor'), 'group actors left unmarked').to.equal(0);
    expect(await unmarked(TRAY_TARGET_ACTIONS, 'activity.actor'), 'kept actions left unmarked').to.equal(0);
    const live = await mongo.db
      .collection<TargetActorDoc>(TRAY_TARGET_ACTORS)
      .find({ 'actor.userId': { $in: ['u-eve', 'u-dee'] } })
      .toArray();
    expect(live, 'live actors').not.to.be.empty;
    expect(
      live.filter((doc) => doc.actor.deleted),
      'live actors marked',
    ).to.deep.equal([]);
  });
});

/** As deletions stored the users' snapshots before the mark: the name only. */
async function unmark(db: Db, userIds: readonly string[]): Promise<void> {
  for (const userId of userIds) {
    const unmarked = { userId, name: 'Deleted user' };
    await db
      .collection<TargetActorDoc>(TRAY_TARGET_ACTORS)
      .updateMany({ 'actor.userId': userId }, { $set: { actor: unmarked } });
    await db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .updateMany({ 'activity.actor.userId': userId }, { $set: { 'activity.actor': unmarked } });
  }
  // FerretDB has no `$[]`: each record is replaced whole.
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  for (const record of await records.find({ 'actors.userId': { $in: [...userIds] } }).toArray())
    await records.updateOne(
      { _id: record._id },
      {
        $set: {
          actors: record.actors.map((actor) => {
            const { deleted: _mark, ...unmarked } = actor;
            return userIds.includes(actor.userId) ? unmarked : actor;
          }),
        },
      },
    );
}

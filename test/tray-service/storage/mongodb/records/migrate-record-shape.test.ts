import { expect } from 'chai';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { createSortedPages } from '../../../../../tray-service/storage/mongodb/records/sorted-pages.ts';
import {
  migrateRecordShape,
  type LegacyRecordDoc,
} from '../../../../../tray-service/storage/mongodb/records/migrate-record-shape.ts';
import { migrateInboxState } from '../../../../../tray-service/storage/mongodb/records/migrate-inbox-state.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { processJob } from '../support/process-job.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { commentEvent, minute } from '../../../worker/event-builder.ts';
import { jobDataOf } from '../../../worker/worker-harness.ts';

/** A record as the version before bounded records stored it. */
function legacyRecord(userId: string, postId: string, actors: string[], lastUpdate: number): LegacyRecordDoc {
  return {
    _id: `comment_${postId}_${userId}`,
    userId,
    verb: 'comment',
    targetId: postId,
    targetType: 'post',
    targetName: 'Hiking Club',
    parentTargetId: 'c-hike',
    lastActionId: `cm-${actors[0]}`,
    feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
    actors: actors
      .slice(0, 3)
      .map((actor, index) => ({ userId: actor, name: actor.toUpperCase(), at: lastUpdate - index })),
    actorsCount: actors.length,
    actorLog: actors.map((actor, index) => ({
      userId: actor,
      at: lastUpdate - index,
      actionId: `cm-${actor}`,
    })),
    lastUpdate,
    hasRead: false,
    expiresAt: new Date(lastUpdate + 90 * 86_400_000),
    version: 3,
  };
}

// Databases written by earlier versions hold records with an actor log and none of the equality
// keys: the worker brings them to the current shape before it takes jobs, once.
describe('migrateRecordShape (records of earlier versions)', () => {
  const mongo = useMongo();
  const lastUpdate = Date.parse(minute(1));

  before(async () => {
    await ensureTestCollections(mongo.db, workerCollections);
    await mongo.db
      .collection<LegacyRecordDoc>(TRAY_RECORDS)
      .insertMany([
        legacyRecord('u-ana', 'p-old', ['u-ben', 'u-cid', 'u-dee', 'u-eve'], lastUpdate),
        legacyRecord('u-fay', 'p-old2', ['u-gus'], lastUpdate - 5),
      ]);
  });

  it('gives every record its keys and unread time, moves the actor log to the group, and runs once', async () => {
    expect(await migrateRecordShape(mongo.db, { retentionDays: 90 })).to.equal(2);
    const record = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .findOne({ _id: 'comment_p-old_u-ana' });
    expect(record).to.not.have.property('actorLog');
    expect(record).to.include({ unreadAt: lastUpdate, countFrom: lastUpdate - 3, actorsCount: 4 });
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-ben', 'u-cid', 'u-dee']);
    expect(await migrateRecordShape(mongo.db, { retentionDays: 90 })).to.equal(0);
  });

  it('leaves them readable, once given their inbox state as at open: history, unread count', async () => {
    await migrateInboxState(mongo.db);
    const records = createMongoRecords(mongo.db, { lastRead: { latest: async () => 0 } });
    const page = await createSortedPages(mongo.db).pageAfter('u-ana', undefined, 10, Date.now(), 'inbox');
    expect(page.records.map((r) => r._id)).to.deep.equal(['comment_p-old_u-ana']);
    expect(await records.countUnread('u-ana', 0, Date.now())).to.equal(1);
  });

  it('lets new activity group with the migrated actors (the count goes on from 4)', async () => {
    await processJob(
      mongo.db,
      jobDataOf(
        commentEvent({ postId: 'p-old', commentId: 'cm-new', author: 'u-hal', createdAt: minute(2) }),
      ),
      { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 },
    );
    const record = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .findOne({ _id: 'comment_p-old_u-ana' });
    expect(record?.actorsCount).to.equal(5);
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-hal', 'u-ben', 'u-cid']);
  });
});

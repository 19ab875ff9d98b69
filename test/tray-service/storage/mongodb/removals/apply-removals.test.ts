import { expect } from 'chai';
import { BSON, type Db, type Document } from 'mongodb';
import { showsDeleted } from '../../../../../tray-service/domain/deleted-user.ts';
import { applyProfileChanges } from '../../../../../tray-service/storage/mongodb/grouping/apply-profile-changes.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import type { Removal } from '../../../../../tray-service/domain/removal.ts';
import {
  TRAY_RECORDS,
  TRAY_REMOVALS,
  TRAY_REMOVAL_WORK,
  TRAY_TARGET_ACTIONS,
  TRAY_TARGET_ACTORS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { applyMemberships } from '../../../../../tray-service/storage/mongodb/writes/apply-memberships.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/writes/fan-out-posts.ts';
import type { TargetActionDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actors-collection.ts';
import { keepTargetActions } from '../../../../../tray-service/storage/mongodb/grouping/target-actions.ts';
import {
  readGroupActors,
  recordGroupActions,
} from '../../../../../tray-service/storage/mongodb/grouping/target-actors.ts';
import { recordGroup } from '../../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import {
  applyRemovals,
  VOIDED_PER_NOTE,
} from '../../../../../tray-service/storage/mongodb/removals/apply-removals.ts';
import type { RemovalWorkDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-removal-work-collection.ts';
import { reapplyRemovals } from '../../../../../tray-service/storage/mongodb/removals/reapply-removals.ts';
import { storeTombstones } from '../../../../../tray-service/storage/mongodb/removals/tombstones.ts';
import type { RemovedRecord } from '../../../../../tray-service/storage/port.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import { aComment, aCommentReaction, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { withCollectionMethod } from '../../../../support/with-collection-method.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW, keptSince: 0 };
const removalOf = (id: string, postId: string): Removal => ({ kind: 'comment', id, postId, at: NOW });

// The MongoDB adapter's own mechanics of removals (docs/storage.md#removals); what a removal does to
// a tray is the conformance suite's (removals-cases.ts), against the reference tray.
describe('applyRemovals (MongoDB-compatible server)', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const record = (key: string) => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: key });
  const comments = (postId: string, list: [string, string, number][]) =>
    list.map(([actor, id, minute]) =>
      aComment(actor, { postId, owner: 'u-ana' }, { id, at: at(minute), userFeed: 'u-ana' }),
    );

  it('takes the voided actions out of the kept actions and group actors, the actor back at their newest action left', async () => {
    await applyPersonalActivities(
      mongo.db,
      comments('p-1', [
        ['u-ben', 'cm-b1', 1],
        ['u-cy', 'cm-c', 2],
        ['u-ben', 'cm-b2', 3],
      ]),
      options,
    );
    const group = recordGroup('comment', 'p-1');
    // Reading the group's actors prunes Ben's older action: only his newest is a group actor.
    expect(await applyRemovals(mongo.db, [removalOf('cm-b2', 'p-1')], options)).to.deep.equal([]);
    const kept = await mongo.db.collection<TargetActionDoc>(TRAY_TARGET_ACTIONS).find({ group }).toArray();
    expect(kept.map((doc) => doc.activity.lastActionId).sort()).to.deep.equal(['cm-b1', 'cm-c']);
    const actors = await mongo.db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS).find({ group }).toArray();
    expect(actors.map((doc) => doc.actionId).sort()).to.deep.equal(['cm-b1', 'cm-c']);
    expect(await record(recordKey('comment', 'p-1', 'u-ana'))).to.include({
      actorsCount: 2,
      lastActionId: 'cm-c',
      lastActionAt: at(2),
      lastUpdate: at(3),
      updateFloor: at(3),
    });
    // A later comment between the one named and lastUpdate is the newest; lastUpdate stays.
    await applyPersonalActivities(mongo.db, comments('p-1', [['u-dee', 'cm-d', 2.5]]), options);
    const after = await record(recordKey('comment', 'p-1', 'u-ana'));
    expect(after).to.include({
      actorsCount: 3,
      lastActionId: 'cm-d',
      lastActionAt: at(2.5),
      lastUpdate: at(3),
    });
  });

  it('finishes on a retry what a failed try left: the work noted before the actions went', async () => {
    await applyPersonalActivities(
      mongo.db,
      comments('p-2', [
        ['u-ben', 'cm-2b', 1],
        ['u-cy', 'cm-2c', 2],
      ]),
      options,
    );
    const key = recordKey('comment', 'p-2', 'u-ana');
    const records = mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
    const before = await records.findOne({ _id: key });
    if (!before) throw new Error('no record');
    await applyRemovals(mongo.db, [removalOf('cm-2c', 'p-2')], options);
    expect(await record(key)).to.include({ actorsCount: 1, lastActionId: 'cm-2b' });
    // As a try that failed right after taking the actions out left it: the record not computed
    // again, the work still noted.
    await records.replaceOne({ _id: key }, { ...before, version: before.version + 5 });
    await mongo.db.collection<RemovalWorkDoc>(TRAY_REMOVAL_WORK).insertOne({
      _id: 'left-by-a-failed-try',
      postId: 'p-2',
      group: recordGroup('comment', 'p-2'),
      voided: ['cm-2c'],
      expiresAt: new Date(NOW + 86_400_000),
    });
    expect(await record(key)).to.include({ actorsCount: 2, lastActionId: 'cm-2c' });
    await applyRemovals(mongo.db, [removalOf('cm-2c', 'p-2')], options);
    expect(await record(key)).to.include({ actorsCount: 1, lastActionId: 'cm-2b' });
    expect(await mongo.db.collection(TRAY_REMOVAL_WORK).countDocuments({ postId: 'p-2' })).to.equal(0);
  });

  it('leaves a record counting from before every action was kept as it is, unless its own target went', async () => {
    await applyPersonalActivities(
      mongo.db,
      comments('p-3', [
        ['u-ben', 'cm-3b', 1],
        ['u-cy', 'cm-3c', 2],
      ]),
      options,
    );
    const key = recordKey('comment', 'p-3', 'u-ana');
    // As an older version kept it: Ben's comment is in the record, not among the kept actions.
    await mongo.db.collection(TRAY_TARGET_ACTIONS).deleteMany({ 'activity.lastActionId': 'cm-3b' });
    const legacy = { ...options, keptSince: at(10) };
    await applyRemovals(mongo.db, [removalOf('cm-3c', 'p-3')], legacy);
    expect(await record(key)).to.include({ actorsCount: 2, lastActionId: 'cm-3c' });
    // The post itself deleted: the record goes, though no kept action leads to it.
    const gone = await applyRemovals(mongo.db, [{ kind: 'post', id: 'p-3', postId: 'p-3', at: NOW }], legacy);
    expect(gone).to.deep.equal([{ userId: 'u-ana', key }]);
    expect(await record(key)).to.equal(null);
  });

  it('applies a removal stored while a write ran once more after it (reapplyRemovals)', async () => {
    const late = comments('p-4', [['u-ben', 'cm-4b', 1]]);
    await applyPersonalActivities(mongo.db, late, options);
    const key = recordKey('comment', 'p-4', 'u-ana');
    expect(await record(key)).to.include({ lastActionId: 'cm-4b' });
    // The tombstone landed after the write's own check: the write kept and counted the comment.
    await storeTombstones(mongo.db, [removalOf('cm-4b', 'p-4')], { now: NOW, retentionDays: 90 });
    const removed: RemovedRecord[] = [];
    await reapplyRemovals(mongo.db, late, {
      ...options,
      onRemoved: async (records) => {
        removed.push(...records);
      },
    });
    expect(await record(key)).to.equal(null);
    expect(removed).to.deep.equal([{ userId: 'u-ana', key }]);
    // Arriving again, it is a no-op.
    await applyPersonalActivities(mongo.db, late, options);
    expect(await record(key)).to.equal(null);
  });

  // The group actors are what every later delivery on the target counts from: a voided action
  // left there is counted (and named) on every record to come, an actor missing is left out.
  describe('the group actors, whatever order the steps of a removal and a write run in', () => {
    const actorsOf = async (group: string) =>
      (await readGroupActors(mongo.db, group)).actions.map(
        (action) => `${action.actor.userId}@${action.actionId}`,
      );
    /** As a try of the removal of `actionId` that failed after taking it out of the kept actions. */
    const failedTry = async (postId: string, actionId: string, alsoActors: boolean) => {
      await storeTombstones(mongo.db, [removalOf(actionId, postId)], { now: NOW, retentionDays: 90 });
      await mongo.db.collection<RemovalWorkDoc>(TRAY_REMOVAL_WORK).insertOne({
        _id: `left-by-a-failed-try-${actionId}`,
        postId,
        group: recordGroup('comment', postId),
        voided: [actionId],
        expiresAt: new Date(NOW + 86_400_000),
      });
      await mongo.db.collection(TRAY_TARGET_ACTIONS).deleteMany({ 'activity.lastActionId': actionId });
      if (alsoActors) await mongo.db.collection(TRAY_TARGET_ACTORS).deleteMany({ actionId });
    };

    it('a retry takes out the voided action the failed try left among the actors', async () => {
      await applyPersonalActivities(
        mongo.db,
        comments('p-7', [
          ['u-ben', 'cm-7b', 1],
          ['u-cy', 'cm-7c', 2],
        ]),
        options,
      );
      await failedTry('p-7', 'cm-7b', false);
      await applyRemovals(mongo.db, [removalOf('cm-7b', 'p-7')], options);
      expect(await actorsOf(recordGroup('comment', 'p-7'))).to.deep.equal(['u-cy@cm-7c']);
      // The next comment's record counts Cy and Dee, not the removed comment's author.
      await applyPersonalActivities(mongo.db, comments('p-7', [['u-dee', 'cm-7d', 4]]), options);
      expect(await record(recordKey('comment', 'p-7', 'u-ana'))).to.include({ actorsCount: 2 });
    });

    it('a retry puts back the actor whose newest action the failed try took out', async () => {
      await applyPersonalActivities(
        mongo.db,
        comments('p-8', [
          ['u-ben', 'cm-8b1', 1],
          ['u-cy', 'cm-8c', 2],
          ['u-ben', 'cm-8b2', 3],
        ]),
        options,
      );
      await failedTry('p-8', 'cm-8b2', true);
      await applyRemovals(mongo.db, [removalOf('cm-8b2', 'p-8')], options);
      expect(await actorsOf(recordGroup('comment', 'p-8'))).to.deep.equal(['u-cy@cm-8c', 'u-ben@cm-8b1']);
      await applyPersonalActivities(mongo.db, comments('p-8', [['u-dee', 'cm-8d', 4]]), options);
      expect(await record(recordKey('comment', 'p-8', 'u-ana'))).to.include({ actorsCount: 3 });
    });

    it('a write that adds its action to the actors after the removal ran leaves it out once reapplied', async () => {
      const late: Activity[] = comments('p-9', [['u-xav', 'cm-9x', 1]]);
      const group = recordGroup('comment', 'p-9');
      // The write passed its tombstone check and kept the comment; then the removal ran whole.
      await keepTargetActions(mongo.db, late, 90);
      await applyRemovals(mongo.db, [removalOf('cm-9x', 'p-9')], options);
      // The write goes on: the comment joins the group actors, then the write reapplies the removal.
      await recordGroupActions(
        mongo.db,
        late.map((activity) => ({
          group,
          action: { actor: activity.actor, at: activity.at, actionId: activity.lastActionId },
          expiresAt: new Date(NOW + 86_400_000),
        })),
      );
      await reapplyRemovals(mongo.db, late, options);
      expect(await actorsOf(group)).to.deep.equal([]);
      await applyPersonalActivities(mongo.db, comments('p-9', [['u-dee', 'cm-9d', 4]]), options);
      expect(await record(recordKey('comment', 'p-9', 'u-ana'))).to.include({ actorsCount: 1 });
    });

    it('a reader pruning an actor’s older action while a removal takes out the newest keeps the older one', async () => {
      const group = recordGroup('comment', 'p-10');
      const both = comments('p-10', [
        ['u-ben', 'cm-10b1', 1],
        ['u-ben', 'cm-10b2', 3],
      ]);
      // Both actions kept and among the actors, before any reader pruned the older one.
      await keepTargetActions(mongo.db, both, 90);
      await recordGroupActions(
        mongo.db,
        both.map((activity) => ({
          group,
          action: { actor: activity.actor, at: activity.at, actionId: activity.lastActionId },
          expiresAt: new Date(NOW + 86_400_000),
        })),
      );
      // The reader read both and is about to prune the older; the removal of the newer runs first.
      let ran = false;
      const removalFirst = withCollectionMethod(
        mongo.db,
        TRAY_TARGET_ACTORS,
        'deleteMany',
        (deleteMany) =>
          async (...args: Parameters<typeof deleteMany>) => {
            if (!ran) {
              ran = true;
              await applyRemovals(mongo.db, [removalOf('cm-10b2', 'p-10')], options);
            }
            return deleteMany(...args);
          },
      );
      await readGroupActors(removalFirst, group);
      expect(await actorsOf(group)).to.deep.equal(['u-ben@cm-10b1']);
    });
  });

  // No transactions here: the records a removal deletes stay deleted when a later group of the same
  // job fails, and its retry finds them gone. Told only once every group was done, they were never
  // told at all: live streams and the removal log kept showing them.
  // One note per group listed every voided action: a deleted post with some 120,000 reactions
  // kept (ids of 128 characters) made a note past MongoDB's 16 MiB, which the driver refused, on
  // every retry, and the removal never took anything out.
  it('notes the voided actions of a group in notes of a bounded size, and applies them all', async () => {
    const ids = ['cm-13a', 'cm-13b', 'cm-13c', 'cm-13d', 'cm-13e'];
    await applyPersonalActivities(
      mongo.db,
      comments(
        'p-13',
        ids.map((id, minute) => [`u-${id}`, id, minute + 1]),
      ),
      options,
    );
    const notes: RemovalWorkDoc[] = [];
    const recording = withCollectionMethod(
      mongo.db,
      TRAY_REMOVAL_WORK,
      'insertMany',
      (insertMany) =>
        ((docs: readonly Document[], ...rest: unknown[]) => {
          notes.push(...(docs as readonly RemovalWorkDoc[]));
          return (insertMany as (...args: unknown[]) => unknown)(docs, ...rest);
        }) as typeof insertMany,
    );
    const post: Removal = { kind: 'post', id: 'p-13', postId: 'p-13', at: NOW };
    const removed = await applyRemovals(recording, [post], { ...options, keptSince: 1, voidedPerNote: 2 });
    expect(removed).to.deep.equal([{ userId: 'u-ana', key: recordKey('comment', 'p-13', 'u-ana') }]);
    expect(notes.map((note) => note.voided.length).sort()).to.deep.equal([1, 2, 2]);
    expect(notes.flatMap((note) => note.voided).sort()).to.deep.equal(ids);
    expect(await mongo.db.collection(TRAY_REMOVAL_WORK).countDocuments({ postId: 'p-13' })).to.equal(0);
  });

  it('keeps a note of as many voided actions as it takes, each id at its longest, under 16 MiB', () => {
    const longest = 'x'.repeat(128);
    const note: RemovalWorkDoc = {
      _id: 'x'.repeat(43),
      postId: longest,
      group: JSON.stringify(['reaction', longest]),
      voided: Array.from({ length: VOIDED_PER_NOTE }, (_, i) => `${i}`.padStart(128, 'x')),
      keepUntil: new Date(NOW),
      expiresAt: new Date(NOW),
    };
    expect(BSON.calculateObjectSize(note)).to.be.below(16 * 1024 * 1024);
  });

  // A comment deleted beside its author's account (both sent at once when an account goes): the
  // removal put the author back among the group's actors from a kept action read before the
  // deletion renamed it, after the deletion had renamed the actors: the group's records named the
  // deleted user again, with their image.
  it('never puts a deleted actor back under their old name', async () => {
    await applyPersonalActivities(
      mongo.db,
      comments('p-14', [
        ['u-dana', 'cm-14a', 1],
        ['u-dana', 'cm-14b', 2],
      ]),
      options,
    );
    let deletedMeanwhile = false;
    const racing = withCollectionMethod(
      mongo.db,
      TRAY_TARGET_ACTORS,
      'insertMany',
      (insertMany) =>
        (async (docs: readonly Document[], ...rest: unknown[]) => {
          if (!deletedMeanwhile) {
            deletedMeanwhile = true;
            // The deletion runs whole between the removal's read of the kept actions and its insert.
            await applyProfileChanges(
              mongo.db,
              [{ userId: 'u-dana', displayName: 'Dana', deleted: true, at: NOW }],
              { owner: 'job-2', now: () => NOW },
            );
          }
          return (insertMany as (...args: unknown[]) => unknown)(docs, ...rest);
        }) as unknown as typeof insertMany,
    );
    await applyRemovals(racing, [removalOf('cm-14b', 'p-14')], options);
    expect(deletedMeanwhile, 'the removal put an actor back').to.equal(true);
    const group = recordGroup('comment', 'p-14');
    const actors = await mongo.db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS).find({ group }).toArray();
    expect(actors.length).to.be.above(0);
    for (const actor of actors) expect(showsDeleted(actor.actor), JSON.stringify(actor.actor)).to.equal(true);
    const named = (await record(recordKey('comment', 'p-14', 'u-ana')))?.actors ?? [];
    for (const actor of named) expect(showsDeleted(actor), JSON.stringify(actor)).to.equal(true);
  });

  it('tells each deleted record as it goes, so a later group’s failure loses none', async () => {
    await applyPersonalActivities(mongo.db, comments('p-11', [['u-ben', 'cm-11b', 1]]), options);
    await applyPersonalActivities(
      mongo.db,
      comments('p-12', [
        ['u-cy', 'cm-12c', 1],
        ['u-dee', 'cm-12d', 2],
      ]),
      options,
    );
    const emptied = recordKey('comment', 'p-11', 'u-ana');
    const shrunk = recordKey('comment', 'p-12', 'u-ana');
    // The second group's work fails, as a server gone at that moment would.
    const failing = withCollectionMethod(
      mongo.db,
      TRAY_TARGET_ACTORS,
      'find',
      (find) =>
        ((filter: { group?: unknown }, ...rest: unknown[]) => {
          if (filter?.group === recordGroup('comment', 'p-12')) throw new Error('connection lost mid-job');
          return (find as (...args: unknown[]) => unknown)(filter, ...rest);
        }) as typeof find,
    );
    const told: RemovedRecord[] = [];
    const removals = [removalOf('cm-11b', 'p-11'), removalOf('cm-12d', 'p-12')];
    const onRemoved = async (records: readonly RemovedRecord[]) => void told.push(...records);
    await expect(applyRemovals(failing, removals, { ...options, onRemoved })).to.be.rejectedWith(
      'connection lost mid-job',
    );
    expect(await record(emptied)).to.equal(null);
    expect(told).to.deep.equal([{ userId: 'u-ana', key: emptied }]);
    // The retry finds it gone, and finishes the rest.
    await applyRemovals(mongo.db, removals, { ...options, onRemoved });
    expect(told).to.deep.equal([{ userId: 'u-ana', key: emptied }]);
    expect(await record(shrunk)).to.include({ actorsCount: 1, lastActionId: 'cm-12c' });
  });

  // No transactions here: a write that passed its tombstone check, kept and counted its actions,
  // then failed before its reapplyRemovals, left them to a removal stored meanwhile, which found
  // nothing to void when it ran. The retry sees the tombstone and writes nothing; it must still
  // apply the removal to what the failed try left.
  // An unlike is the commonest removal, and lands on the busiest posts: it read every action kept on
  // its post (100,000 reactions and comments on a popular one) to find the one it voids.
  it('finds what a reaction’s removal voids without reading the rest of its post', async () => {
    const comment = { commentId: 'cm-41', owner: 'u-ben', postId: 'p-41' };
    await applyPersonalActivities(
      mongo.db,
      [
        ...comments(
          'p-41',
          Array.from({ length: 60 }, (_, n): [string, string, number] => [`u-${n}`, `cm-41-${n}`, n + 1]),
        ),
        ...Array.from({ length: 5 }, (_, n) =>
          aCommentReaction(`u-r${n}`, comment, { id: `re-41-${n}`, at: at(100 + n), userFeed: 'u-ana' }),
        ),
      ],
      options,
    );
    let read = 0;
    const counting = withCollectionMethod(
      mongo.db,
      TRAY_TARGET_ACTIONS,
      'find',
      (find) =>
        ((...args: Parameters<typeof find>) => {
          const cursor = find(...args);
          const toArray = cursor.toArray.bind(cursor);
          cursor.toArray = async () => {
            const docs = await toArray();
            read += docs.length;
            return docs;
          };
          return cursor;
        }) as typeof find,
    );
    const unlike: Removal = { kind: 'reaction', id: 're-41-2', postId: 'p-41', at: NOW };
    await applyRemovals(counting, [unlike], options);
    const left = await mongo.db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .find({ group: recordGroup('mentreact', 'cm-41') })
      .toArray();
    expect(left.map((doc) => doc.activity.lastActionId).sort()).to.deep.equal([
      're-41-0',
      're-41-1',
      're-41-3',
      're-41-4',
    ]);
    // The reaction's own group (its record computed again from it), none of the 60 comments.
    expect(read).to.be.above(0).and.below(20);
  });

  describe('a write retried after a try that failed past its keep, with a removal stored between', () => {
    it('a comment: the retry takes it out of the record the try wrote', async () => {
      const late = comments('p-5', [['u-ben', 'cm-5b', 1]]);
      // The failed try, up to its reapplyRemovals: kept and counted.
      await applyPersonalActivities(mongo.db, late, options);
      const key = recordKey('comment', 'p-5', 'u-ana');
      expect(await record(key)).to.include({ lastActionId: 'cm-5b' });
      await storeTombstones(mongo.db, [removalOf('cm-5b', 'p-5')], { now: NOW, retentionDays: 90 });
      await applyPersonalActivities(mongo.db, late, options);
      expect(await record(key)).to.equal(null);
      expect(await mongo.db.collection(TRAY_TARGET_ACTIONS).countDocuments({ postId: 'p-5' })).to.equal(0);
    });

    it('a community post: the retry takes it out of the members’ records and of the kept posts', async () => {
      await applyMemberships(
        mongo.db,
        ['u-ana', 'u-ben'].map((userId) => ({ communityId: 'c-6', userId, active: true, at: at(0) })),
        options,
      );
      const post = aPost('u-ben', { id: 'p-6', at: at(1), communityId: 'c-6' });
      await fanOutCommunityPosts(mongo.db, 'c-6', [post], options);
      const key = recordKey('post', 'c-6', 'u-ana');
      expect(await record(key)).to.include({ lastActionId: 'p-6' });
      await storeTombstones(
        mongo.db,
        [{ kind: 'post', id: 'p-6', postId: 'p-6', at: NOW, communityId: 'c-6' }],
        {
          now: NOW,
          retentionDays: 90,
        },
      );
      await fanOutCommunityPosts(mongo.db, 'c-6', [post], options);
      expect(await record(key)).to.equal(null);
      expect(await mongo.db.collection(TRAY_TARGET_ACTIONS).countDocuments({ postId: 'p-6' })).to.equal(0);
    });
  });

  // The removal ran whole between the failed try's keep and its record write: it took the kept
  // actions out and computed the records before the try's landed, then the try failed before its
  // second check. The retry met the tombstone, found the actions no longer kept and took that for
  // nothing to repair: the records named the deleted comment or post until they expired.
  describe('a write retried after a try that failed past its record write, with a removal run whole between its keep and that write', () => {
    /** `racing` with its first read of the tombstones after the removal ran failing: the try dies there. */
    const failingAfterRemoval = (racing: { db: Db; ran: { value: boolean } }) =>
      withCollectionMethod(
        racing.db,
        TRAY_REMOVALS,
        'find',
        (find) =>
          ((...args: Parameters<typeof find>) => {
            if (racing.ran.value) throw new Error('the test: the try dies before its second check');
            return find(...args);
          }) as typeof find,
      );
    const actorsOf = (actionId: string) =>
      mongo.db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS).countDocuments({ actionId });

    it('a comment: the retry takes it out of the record the try wrote', async () => {
      const late = comments('p-40', [['u-ben', 'cm-40b', 1]]);
      const racing = removalBeforeInsert(removalOf('cm-40b', 'p-40'));
      const failed = await applyPersonalActivities(failingAfterRemoval(racing), late, options).then(
        () => 'finished',
        (error: Error) => error.message,
      );
      expect(failed).to.match(/dies before its second check/);
      const key = recordKey('comment', 'p-40', 'u-ana');
      expect(await record(key), 'the try’s record').to.include({ lastActionId: 'cm-40b' });
      await applyPersonalActivities(mongo.db, late, options);
      expect(await record(key)).to.equal(null);
      expect(await actorsOf('cm-40b')).to.equal(0);
    });

    it('a community post: the retry takes it out of the members’ records', async () => {
      await applyMemberships(
        mongo.db,
        ['u-ana', 'u-ben'].map((userId) => ({ communityId: 'c-41', userId, active: true, at: at(0) })),
        options,
      );
      const post = aPost('u-ben', { id: 'p-41', at: at(1), communityId: 'c-41' });
      const racing = removalBeforeInsert({
        kind: 'post',
        id: 'p-41',
        postId: 'p-41',
        at: NOW,
        communityId: 'c-41',
      });
      const failed = await fanOutCommunityPosts(failingAfterRemoval(racing), 'c-41', [post], options).then(
        () => 'finished',
        (error: Error) => error.message,
      );
      expect(failed).to.match(/dies before its second check/);
      const key = recordKey('post', 'c-41', 'u-ana');
      expect(await record(key), 'the try’s record').to.include({ lastActionId: 'p-41' });
      await fanOutCommunityPosts(mongo.db, 'c-41', [post], options);
      expect(await record(key)).to.equal(null);
      expect(await actorsOf('p-41')).to.equal(0);
    });

    // The removal ran between the try's keep and its actor's entry: it took the kept action out
    // and repaired the actors before the entry was in; the try then died before its record write.
    // No record counts the action, yet the entry would name its actor on every later delivery.
    it('a try that died before its record write, its actor entered after the removal: the retry takes the entry out', async () => {
      const key = recordKey('comment', 'p-43', 'u-ana');
      await applyPersonalActivities(mongo.db, comments('p-43', [['u-cy', 'cm-43c', 3]]), options);
      const late = comments('p-43', [['u-ben', 'cm-43b', 1]]);
      const ran = { value: false };
      const racing = withCollectionMethod(
        withCollectionMethod(
          mongo.db,
          TRAY_TARGET_ACTORS,
          'insertMany',
          (insertMany) =>
            (async (...args: unknown[]) => {
              if (!ran.value) {
                ran.value = true;
                await applyRemovals(mongo.db, [removalOf('cm-43b', 'p-43')], options);
              }
              return (insertMany as (...args: unknown[]) => Promise<unknown>)(...args);
            }) as typeof insertMany,
        ),
        TRAY_RECORDS,
        'findOne',
        // Dead at its first read of the records, before it claims one: a claim left behind would
        // hold the record for a minute (compare-and-set).
        (findOne) =>
          ((...args: Parameters<typeof findOne>) => {
            if (ran.value) throw new Error('the test: the try dies before its record write');
            return findOne(...args);
          }) as typeof findOne,
      );
      const failed = await applyPersonalActivities(racing, late, options).then(
        () => 'finished',
        (error: Error) => error.message,
      );
      expect(failed).to.match(/dies before its record write/);
      expect(await actorsOf('cm-43b'), 'the try’s entry').to.equal(1);
      await applyPersonalActivities(mongo.db, late, options);
      expect(await actorsOf('cm-43b')).to.equal(0);
      // And a later comment's record counts no one it should not.
      await applyPersonalActivities(mongo.db, comments('p-43', [['u-dee', 'cm-43d', 4]]), options);
      expect(await record(key)).to.include({ actorsCount: 2, lastActionId: 'cm-43d' });
    });

    it('a comment counted behind the three actors a record shows: the retry takes it out of the count', async () => {
      const key = recordKey('comment', 'p-42', 'u-ana');
      const newer: [string, string, number][] = [
        ['u-cy', 'cm-42c', 3],
        ['u-dee', 'cm-42d', 4],
        ['u-eve', 'cm-42e', 5],
      ];
      await applyPersonalActivities(mongo.db, comments('p-42', newer), options);
      const late = comments('p-42', [['u-ben', 'cm-42b', 1]]);
      const racing = removalBeforeInsert(removalOf('cm-42b', 'p-42'), 'bulkWrite');
      const failed = await applyPersonalActivities(failingAfterRemoval(racing), late, options).then(
        () => 'finished',
        (error: Error) => error.message,
      );
      expect(failed).to.match(/dies before its second check/);
      expect(await record(key), 'the try’s record').to.include({ actorsCount: 4, lastActionId: 'cm-42e' });
      await applyPersonalActivities(mongo.db, late, options);
      expect(await record(key)).to.include({ actorsCount: 3, lastActionId: 'cm-42e' });
      expect(await actorsOf('cm-42b')).to.equal(0);
    });
  });

  /**
   * `db`, on which the first insert of a record (or, with `bulkWrite`, the first update) runs
   * `removal` whole before it: a write that read the group's actors before the removal took its
   * action out, and whose record the removal, which ran before it existed (or before the write
   * counted the action), found nothing of to compute.
   */
  const removalBeforeInsert = (removal: Removal, method: 'insertMany' | 'bulkWrite' = 'insertMany') => {
    const ran = { value: false };
    const db = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      method,
      (write) =>
        (async (...args: unknown[]) => {
          if (!ran.value) {
            ran.value = true;
            await applyRemovals(mongo.db, [removal], options);
          }
          return (write as (...args: unknown[]) => Promise<unknown>)(...args);
        }) as typeof write,
    );
    return { db, ran };
  };

  // A write of another actor's older action, racing a removal on the same post. Its own actions
  // void nothing, so its check after the write met no removal: the record named the removed
  // comment's author until the next delivery to the group.
  describe("a write's records computed again for a removal on its group that it raced", () => {
    const commentOn = async (postId: string) => {
      const post = { postId, owner: 'u-ana' };
      await applyPersonalActivities(
        mongo.db,
        [aComment('u-ben', post, { id: `cm-${postId}-b`, at: at(100), userFeed: 'u-ana' })],
        options,
      );
      // Ana cleared her tray: the next comment makes her a new record.
      await mongo.db.collection(TRAY_RECORDS).deleteMany({ userId: 'u-ana' });
      return post;
    };
    const expectOnly = async (key: string, userId: string, lastActionId: string) => {
      const found = await record(key);
      expect(found?.actors.map((actor) => actor.userId)).to.deep.equal([userId]);
      expect(found).to.include({ actorsCount: 1, lastActionId });
    };

    it('a removal on its post stored while it ran', async () => {
      const post = await commentOn('p-14');
      const racing = removalBeforeInsert(removalOf('cm-p-14-b', 'p-14'));
      await applyPersonalActivities(
        racing.db,
        [aComment('u-cy', post, { id: 'cm-14c', at: at(90), userFeed: 'u-ana' })],
        options,
      );
      expect(racing.ran.value, 'the removal ran inside the write').to.equal(true);
      await expectOnly(recordKey('comment', 'p-14', 'u-ana'), 'u-cy', 'cm-14c');
    });

    // Its tombstone was there at the write's first check, its actions not yet taken out.
    it('a removal still running when it first read the tombstones', async () => {
      const post = await commentOn('p-15');
      const removal = removalOf('cm-p-15-b', 'p-15');
      await storeTombstones(mongo.db, [removal], { now: NOW, retentionDays: 90 });
      const racing = removalBeforeInsert(removal);
      await applyPersonalActivities(
        racing.db,
        [aComment('u-cy', post, { id: 'cm-15c', at: at(90), userFeed: 'u-ana' })],
        options,
      );
      expect(racing.ran.value, 'the removal ran inside the write').to.equal(true);
      await expectOnly(recordKey('comment', 'p-15', 'u-ana'), 'u-cy', 'cm-15c');
    });

    // Applied again for the reaction it voids, the removal computed only the reaction's group,
    // not the post's comments the same write made a record of.
    it('a removal voiding one of its actions, reaching another of its groups', async () => {
      const post = await commentOn('p-17');
      const racing = removalBeforeInsert(removalOf('cm-p-17-b', 'p-17'));
      await applyPersonalActivities(
        racing.db,
        [
          aCommentReaction(
            'u-dee',
            { commentId: 'cm-p-17-b', owner: 'u-ben', postId: 'p-17' },
            {
              id: 'r-17d',
              at: at(95),
              userFeed: 'u-ana',
            },
          ),
          aComment('u-cy', post, { id: 'cm-17c', at: at(90), userFeed: 'u-ana' }),
        ],
        options,
      );
      expect(racing.ran.value, 'the removal ran inside the write').to.equal(true);
      await expectOnly(recordKey('comment', 'p-17', 'u-ana'), 'u-cy', 'cm-17c');
      expect(await record(recordKey('mentreact', 'cm-p-17-b', 'u-ben'))).to.equal(null);
    });

    // A community's post records count its other posts: a post removed there changes them.
    it("a post removed from the community whose posts' records it fanned out", async () => {
      await applyMemberships(
        mongo.db,
        ['u-ana', 'u-ben', 'u-cy'].map((userId) => ({
          communityId: 'c-16',
          userId,
          active: true,
          at: at(0),
        })),
        options,
      );
      await fanOutCommunityPosts(
        mongo.db,
        'c-16',
        [aPost('u-ben', { id: 'p-16b', at: at(100), communityId: 'c-16' })],
        options,
      );
      await mongo.db.collection(TRAY_RECORDS).deleteMany({ userId: 'u-ana' });
      const racing = removalBeforeInsert({
        kind: 'post',
        id: 'p-16b',
        postId: 'p-16b',
        at: NOW,
        communityId: 'c-16',
      });
      await fanOutCommunityPosts(
        racing.db,
        'c-16',
        [aPost('u-cy', { id: 'p-16c', at: at(90), communityId: 'c-16' })],
        options,
      );
      expect(racing.ran.value, 'the removal ran inside the fan-out').to.equal(true);
      await expectOnly(recordKey('post', 'c-16', 'u-ana'), 'u-cy', 'p-16c');
    });
  });
});

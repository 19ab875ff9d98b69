import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/writes/fan-out-posts.ts';
import { recomputeGroupRecords } from '../../../../../tray-service/storage/mongodb/grouping/recompute-group-records.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { createMongoMutes } from '../../../../../tray-service/storage/mongodb/mutes/mongo-mutes.ts';
import { recordGroup } from '../../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aComment, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { claimFor } from '../support/claim-for.ts';
import { MAX_MUTES_IN_FORCE } from '../../../../../tray-service/domain/mute.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;
const options = { retentionDays: 90, fanOutBatch: 1_000, owner: 'job-1', now: () => NOW };

// What a removal will call: a record group's records computed again from the kept actions less the
// voided ones (docs/tray-rules.md#inbox), exactly, on user feeds as on a community's targets.
describe('recomputeGroupRecords (MongoDB-compatible server)', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const record = (key: string) => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: key });

  /**
   * Ana's record of one comment by Ben on her post, whose next version `owner` has claimed and not
   * written: a removal of the comment empties it and must wait for that claim.
   */
  async function heldCommentRecord(postId: string, commentId: string, owner: string, state?: string) {
    await applyPersonalActivities(
      mongo.db,
      [aComment('u-ben', { postId, owner: 'u-ana' }, { id: commentId, at: at(1), userFeed: 'u-ana' })],
      options,
    );
    const key = recordKey('comment', postId, 'u-ana');
    const held = await record(key);
    if (!held) throw new Error('no record');
    await claimFor(mongo.db, owner, key, held.version + 1, state);
    return { key, held };
  }

  it('takes voided actions out of a user-feed record: the next actor moves up, the newest left names the last action, lastUpdate and read state stay', async () => {
    const post = { postId: 'p-feed', owner: 'u-ana' };
    const comment = (actor: string, id: string, minute: number) =>
      aComment(actor, post, { id, at: at(minute), userFeed: 'u-ana', segment: minute });
    await applyPersonalActivities(
      mongo.db,
      [
        comment('u-ben', 'cm-b1', 1),
        comment('u-cy', 'cm-c', 2),
        comment('u-ben', 'cm-b2', 3),
        comment('u-dee', 'cm-d', 4),
      ],
      options,
    );
    const key = recordKey('comment', 'p-feed', 'u-ana');
    await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .updateOne({ _id: key }, { $set: { hasRead: true } });
    const names = (doc: TrayRecordDoc | null) => doc?.actors.map((actor) => actor.userId);
    expect(names(await record(key))).to.deep.equal(['u-dee', 'u-ben', 'u-cy']);
    const group = recordGroup('comment', 'p-feed');

    expect(await recomputeGroupRecords(mongo.db, group, new Set(['cm-d']), options)).to.deep.equal([]);
    const shrunk = await record(key);
    expect(names(shrunk)).to.deep.equal(['u-ben', 'u-cy']);
    expect(shrunk).to.include({ actorsCount: 2, lastActionId: 'cm-b2', lastActionSegmentNo: 3 });
    expect(shrunk).to.include({ lastUpdate: at(4), hasRead: true });

    // Ben's older comment keeps him counted, at its time: Cy is newer now.
    await recomputeGroupRecords(mongo.db, group, new Set(['cm-d', 'cm-b2']), options);
    expect(names(await record(key))).to.deep.equal(['u-cy', 'u-ben']);
    expect(await record(key)).to.include({ actorsCount: 2, lastActionId: 'cm-c' });

    // Again the same: nothing changes.
    const version = (await record(key))?.version;
    await recomputeGroupRecords(mongo.db, group, new Set(['cm-d', 'cm-b2']), options);
    expect((await record(key))?.version).to.equal(version);

    // Nothing left: the record goes.
    expect(
      await recomputeGroupRecords(mongo.db, group, new Set(['cm-d', 'cm-b2', 'cm-b1', 'cm-c']), options),
    ).to.deep.equal([{ userId: 'u-ana', key }]);
    expect(await record(key)).to.equal(null);
  });

  it('on a community’s target, each member’s record without what their mutes held back', async () => {
    for (const userId of ['u-gus', 'u-hal'])
      await applyMembershipChanges(mongo.db, [{ communityId: 'c-mix', userId, active: true, at: at(0) }], {
        retentionDays: 90,
        now: NOW,
      });
    // Hal muted Ivy before her post: his record counts Jon's post alone.
    await createMongoMutes(mongo.db).putMute(
      'u-hal',
      { targetType: 'user', targetId: 'u-ivy' },
      null,
      at(1),
      90,
      MAX_MUTES_IN_FORCE,
    );
    await fanOutCommunityPosts(
      mongo.db,
      'c-mix',
      [aPost('u-ivy', { id: 'p-i', at: at(2), communityId: 'c-mix' })],
      options,
    );
    await fanOutCommunityPosts(
      mongo.db,
      'c-mix',
      [aPost('u-jon', { id: 'p-j', at: at(3), communityId: 'c-mix' })],
      options,
    );
    const gus = recordKey('post', 'c-mix', 'u-gus');
    const hal = recordKey('post', 'c-mix', 'u-hal');
    expect(await record(gus)).to.include({ actorsCount: 2, lastActionId: 'p-j' });
    expect(await record(hal)).to.include({ actorsCount: 1, lastActionId: 'p-j' });

    const removed = await recomputeGroupRecords(
      mongo.db,
      recordGroup('post', 'c-mix'),
      new Set(['p-j']),
      options,
    );
    expect(removed).to.deep.equal([{ userId: 'u-hal', key: hal }]);
    expect(await record(gus)).to.include({ actorsCount: 1, lastActionId: 'p-i', lastUpdate: at(3) });
    expect((await record(gus))?.actors.map((actor) => actor.userId)).to.deep.equal(['u-ivy']);
  });

  it('leaves a record emptied meanwhile to the concurrent remover that claimed it, and is done once it is gone', async () => {
    // Another removal of the same comment has claimed the record's deletion and not deleted it yet.
    const { key, held } = await heldCommentRecord('p-raced', 'cm-raced', 'another-removal', 'deleted');
    const recomputed = recomputeGroupRecords(
      mongo.db,
      recordGroup('comment', 'p-raced'),
      new Set(['cm-raced']),
      options,
    );
    await sleep(300);
    expect(await record(key)).to.include({ version: held.version });
    await mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).deleteOne({ _id: key, version: held.version });
    expect(await recomputed).to.deep.equal([]);
    expect(await record(key)).to.equal(null);
  });

  it('gives up after 60 rounds in a row in which a claim holds an emptied record unmoved, naming its group', async () => {
    const { key, held } = await heldCommentRecord('p-held', 'cm-held', 'a-stopped-writer');
    const waits: number[] = [];
    const backOff = (round: number) => {
      waits.push(round);
      return Promise.resolve();
    };
    const group = recordGroup('comment', 'p-held');
    await expect(
      recomputeGroupRecords(mongo.db, group, new Set(['cm-held']), { ...options, backOff }),
    ).to.be.rejectedWith(`records of ${group} still contended after 60 rounds without progress`);
    expect(waits).to.deep.equal(Array.from({ length: 60 }, (_, index) => index + 1));
    expect(await record(key)).to.include({ version: held.version });
  });
});

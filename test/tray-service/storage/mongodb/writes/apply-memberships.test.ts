import { expect } from 'chai';
import {
  EVENTS,
  TRAY_RECORDS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { eventDocument } from '../../../../../tray-service/storage/mongodb/events/event-document.ts';
import type { EventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { recordKey } from '../../../../../tray-service/domain/activity.ts';
import type { RemovedRecord } from '../../../../../tray-service/storage/port.ts';
import { applyMemberships } from '../../../../../tray-service/storage/mongodb/writes/apply-memberships.ts';
import { applyPersonalActivities } from '../../../../../tray-service/storage/mongodb/writes/apply-personal-activities.ts';
import { fanOutCommunityPosts } from '../../../../../tray-service/storage/mongodb/writes/fan-out-posts.ts';
import { nextProcessed } from '../../../../../tray-service/storage/mongodb/memberships/processing-order.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aComment, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (minute: number) => NOW - 86_400_000 + minute * 60_000;

describe('applyMemberships (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const records = () => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const removed: RemovedRecord[] = [];
  beforeEach(() => (removed.length = 0));
  const options = {
    retentionDays: 90,
    fanOutBatch: 1_000,
    owner: 'job-1',
    now: () => NOW,
    onRemoved: (gone: readonly RemovedRecord[]) => {
      removed.push(...gone);
      return Promise.resolve();
    },
  };
  const change = (communityId: string, userId: string, active: boolean, minute: number) => ({
    communityId,
    userId,
    active,
    at: at(minute),
  });

  // A leave job takes its place, then stalls before storing the leave; a write on the community's
  // targets takes the next place, reads the memberships (no leave yet) and finishes, its check after
  // writing seeing no change of the member. By places the leave came first: it holds back the
  // write's actions dated in its away span, as the reference tray fed in that order does, so when
  // the leave is stored its job computes the member's records by the places. Left as they were, the
  // next computation of those records (a removal, a rename, a back-dated mute) would take a counted
  // action out, which no later computation may do (docs/tray-rules.md#leaving-and-rejoining-a-community).
  it('a leave stored after an action whose place is after its own (taken before the action’s) holds back what it covers, as by places, when stored', async () => {
    const communityId = 'c-race';
    await applyMemberships(mongo.db, [change(communityId, 'u-ana', true, 0)], options);
    const post = { postId: 'p-race', owner: 'u-ana' };
    await fanOutCommunityPosts(
      mongo.db,
      communityId,
      [aPost('u-ana', { id: 'p-race', at: at(1), communityId })],
      options,
    );
    // The leave's place, taken before the actions' (the job stalls here).
    const first = await nextProcessed(mongo.db, 1);
    // A comment dated before the leave and one after it, and a post after it, processed meanwhile.
    await applyPersonalActivities(
      mongo.db,
      [
        aComment('u-ben', post, { id: 'cm-early', at: at(3), communityId }),
        aComment('u-cid', post, { id: 'cm-late', at: at(10), communityId }),
      ],
      options,
    );
    await fanOutCommunityPosts(
      mongo.db,
      communityId,
      [aPost('u-dan', { id: 'p-late', at: at(11), communityId })],
      options,
    );
    const commentKey = recordKey('comment', 'p-race', 'u-ana');
    const postKey = recordKey('post', communityId, 'u-ana');
    expect(await records().findOne({ _id: commentKey })).to.include({ actorsCount: 2 });
    expect(await records().findOne({ _id: postKey })).to.include({ lastActionId: 'p-late' });

    // The leave job resumes and stores its leave with the place it took.
    await applyMemberships(mongo.db, [change(communityId, 'u-ana', false, 5)], { ...options, first });

    // By places: leave, then the comments and the post. The comment before the leave counts, the
    // two after it do not (the post record had nothing else: removed, and told so).
    expect(await records().findOne({ _id: commentKey })).to.include({
      actorsCount: 1,
      lastActionId: 'cm-early',
    });
    expect(await records().findOne({ _id: postKey })).to.equal(null);
    expect(removed).to.deep.equal([{ userId: 'u-ana', key: postKey }]);
  });

  // A join job takes its place, then stalls before storing the join; the member's leave (in the
  // join's own millisecond, or later but before the post) is stored meanwhile with a later place.
  // By places the join came first and the leave takes nothing back, so the join's backfill must add
  // the post kept before both, as the reference tray fed in that order does; the fold of the stored
  // changes, which has the leave, has no membership over the post.
  it('a join stored after its member’s leave whose place is after its own (taken before the leave’s) adds what it lets in', async () => {
    for (const [userId, leftAt] of [
      ['u-ana', 1],
      ['u-bob', 2],
    ] as const) {
      const communityId = `c-backfill-${userId}`;
      const post = aPost('u-cid', { id: `p-${userId}`, at: at(3), communityId });
      await mongo.db.collection<EventDoc>(EVENTS).insertOne(
        eventDocument(
          {
            key: `e-${userId}`,
            event: 'post.created',
            data: {},
            webhook: 'test',
            receivedAt: new Date(NOW),
          },
          { status: 'applied', communityPost: { communityId, at: post.at, activity: post } },
          90,
          new Date(NOW),
        ),
      );
      await fanOutCommunityPosts(mongo.db, communityId, [post], options);
      // The join's place, taken before the leave's (the job stalls here).
      const first = await nextProcessed(mongo.db, 1);
      await applyMemberships(mongo.db, [change(communityId, userId, false, leftAt)], options);
      await applyMemberships(mongo.db, [change(communityId, userId, true, 1)], { ...options, first });
      expect(await records().findOne({ _id: recordKey('post', communityId, userId) }), userId).to.include({
        actorsCount: 1,
        lastActionId: `p-${userId}`,
      });
    }
  });

  it('a leave whose place is after every action changes no record (a late leave takes nothing back)', async () => {
    const communityId = 'c-late';
    await applyMemberships(mongo.db, [change(communityId, 'u-eve', true, 0)], options);
    await fanOutCommunityPosts(
      mongo.db,
      communityId,
      [aPost('u-fay', { id: 'p-after', at: at(11), communityId })],
      options,
    );
    const postKey = recordKey('post', communityId, 'u-eve');
    const before = await records().findOne({ _id: postKey });
    expect(before).to.include({ lastActionId: 'p-after' });
    await applyMemberships(mongo.db, [change(communityId, 'u-eve', false, 5)], options);
    expect(await records().findOne({ _id: postKey })).to.deep.equal(before);
    expect(removed).to.deep.equal([]);
  });
});

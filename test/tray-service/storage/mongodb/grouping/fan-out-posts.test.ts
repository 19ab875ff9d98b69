import { expect } from 'chai';
import { recordGroup } from '../../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import { keyedBatches } from '../../../../../shared/async/keyed-batches.ts';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/records/tray-records-collection.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/tray-collections.ts';
import { processJob, type ProcessOptions } from '../support/process-job.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { waitFor } from '../../../../support/wait-for.ts';
import { membershipEvent, minute, postEvent } from '../../../worker/event-builder.ts';
import { jobDataOf } from '../../../worker/worker-harness.ts';

// A fan-out rewrites every member's record whatever it carries: the posts of one community that
// wait while its fan-out runs go out together in the next, each member's record written once for
// them, and the records are what one fan-out per post would have made.
describe('fanOutCommunityPosts: one community’s waiting posts fanned out together', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  const POSTS = 6;
  const batches: number[] = [];
  let submitted = 0;
  const batchPosts = keyedBatches<Activity>({ maxBatch: 32 });
  const options: ProcessOptions = {
    eventsRetentionDays: 30,
    trayRetentionDays: 90,
    fanOutBatch: 4,
    // Counts what reaches the batches, and holds the first fan-out until every post is waiting.
    scheduleFanOut: (key, post, run) => {
      submitted += 1;
      return batchPosts(key, post, async (posts) => {
        batches.push(posts.length);
        if (batches.length === 1)
          await waitFor(() => submitted === POSTS, 10_000, 'every post waiting for its fan-out');
        await run(posts);
      });
    },
  };
  const process = (envelope: Parameters<typeof jobDataOf>[0]) =>
    processJob(mongo.db, jobDataOf(envelope), options);
  const members = Array.from({ length: 10 }, (_, i) => `u-m${i}`);
  const record = (userId: string) =>
    mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: `post_c-d_${userId}` });

  before(async () => {
    await ensureTestCollections(mongo.db, workerCollections);
    await process(membershipEvent('join', members, 'c-d', minute(-10)));
    // Joins between the third and the fourth post: only the last three reach them.
    await process(membershipEvent('join', ['u-late'], 'c-d', minute(3.5)));
  });

  it('takes the posts that waited in one fan-out, and gives every member the posts they were there for', async () => {
    await Promise.all(
      Array.from({ length: POSTS }, (_, i) =>
        process(
          postEvent({
            postId: `p-d${i + 1}`,
            communityId: 'c-d',
            author: `u-m${i}`,
            createdAt: minute(i + 1),
          }),
        ),
      ),
    );
    // The first fan-out held until all had arrived: whatever it took, the rest went in one more.
    expect(batches.reduce((sum, n) => sum + n, 0)).to.equal(POSTS);
    expect(batches.length).to.be.at.most(2);
    const bystander = await record('u-m9');
    expect(bystander).to.include({ actorsCount: POSTS, lastActionId: `p-d${POSTS}`, hasRead: false });
    expect(bystander?.lastUpdate).to.equal(Date.parse(minute(POSTS)));
    expect(bystander?.actors.map((actor) => actor.userId)).to.deep.equal(['u-m5', 'u-m4', 'u-m3']);
    // An author is not counted in their own record; the late member counts only posts 4 to 6.
    expect(await record('u-m0')).to.include({ actorsCount: POSTS - 1, lastActionId: `p-d${POSTS}` });
    expect(await record('u-late')).to.include({ actorsCount: 3, lastActionId: `p-d${POSTS}` });
    const versions = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ group: recordGroup('post', 'c-d') })
      .toArray();
    expect(versions).to.have.length(members.length + 1);
  });
});

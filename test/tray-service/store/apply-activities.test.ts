import { expect } from 'chai';
import pLimit from 'p-limit';
import { recordGroup } from '../../../shared/tray/storage-keys.ts';
import { TRAY_RECORDS } from '../../../shared/tray/tray-record.ts';
import { workerCollections } from '../../../tray-service/store/tray-collections.ts';
import { processJob, type ProcessOptions } from '../../../tray-service/worker/process-job.ts';
import { ensureTestCollections } from '../../support/ensure-test-collections.ts';
import { useMongo } from '../../support/suite-resources.ts';
import { commentEvent, membershipEvent, minute, postEvent } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';

// A fan-out holds its community's records in memory: the worker runs a few at once (the fan-out
// limit), whatever its job concurrency, and nothing else waits for that limit.
describe('applyActivities: community fan-outs run under the fan-out limit', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  let running = 0;
  let most = 0;
  const calls: string[] = [];
  const limit = pLimit(1);
  const options: ProcessOptions = {
    eventsRetentionDays: 30,
    trayRetentionDays: 90,
    fanOutBatch: 10_000,
    fanOuts: (fanOut) =>
      limit(async () => {
        calls.push('fan-out');
        running += 1;
        most = Math.max(most, running);
        try {
          return await fanOut();
        } finally {
          running -= 1;
        }
      }),
  };
  const process = (envelope: Parameters<typeof jobDataOf>[0]) =>
    processJob(mongo.db, jobDataOf(envelope), options);

  before(async () => {
    await ensureTestCollections(mongo.db, workerCollections);
    const members = Array.from({ length: 30 }, (_, i) => `u-m${i}`);
    for (const community of ['c-a', 'c-b', 'c-c'])
      await process(membershipEvent('join', members, community, minute(-10)));
  });

  it('one fan-out per community post, never two at once under a limit of 1, each complete', async () => {
    calls.length = 0;
    await Promise.all(
      ['c-a', 'c-b', 'c-c'].map((communityId, i) =>
        process(postEvent({ postId: `p-${communityId}`, communityId, author: 'u-m0', createdAt: minute(i) })),
      ),
    );
    expect(calls).to.have.length(3);
    expect(most).to.equal(1);
    for (const communityId of ['c-a', 'c-b', 'c-c']) {
      expect(
        await mongo.db.collection(TRAY_RECORDS).countDocuments({ group: recordGroup('post', communityId) }),
      ).to.equal(29);
    }
  });

  it('a comment (personal deliveries) does not take the fan-out limit', async () => {
    calls.length = 0;
    await process(commentEvent({ postId: 'p-c-a', commentId: 'cm-1', author: 'u-m3', createdAt: minute(5) }));
    expect(calls).to.deep.equal([]);
  });
});

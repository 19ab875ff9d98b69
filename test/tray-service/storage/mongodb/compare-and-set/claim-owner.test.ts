import { expect } from 'chai';
import { pino } from 'pino';
import { jobScope } from '../../../../../shared/async/job-scope.ts';
import { keyedBatches } from '../../../../../shared/async/keyed-batches.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import { TRAY_RECORD_CLAIMS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { claimOwner } from '../../../../../tray-service/storage/mongodb/compare-and-set/claim-owner.ts';
import type { RecordClaimDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-record-claims-collection.ts';
import { openMongoStorage } from '../../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../../../../tray-service/storage/port.ts';
import { applyJob, type ScheduleFanOut } from '../../../../../tray-service/use-cases/apply-job.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { membershipEvent, minute, postEvent, type TestEnvelope } from '../../../worker/event-builder.ts';
import { jobDataOf } from '../../../worker/worker-harness.ts';

describe('claimOwner: whose version claims a write takes', () => {
  it('the job the write runs for; outside any job, an owner of its own each time', async () => {
    expect(await jobScope.run('job-1', async () => claimOwner())).to.equal('job-1');
    const [first, second] = [claimOwner(), claimOwner()];
    expect(first).to.match(/^api:/);
    expect(second).to.match(/^api:/).and.not.equal(first);
  });

  // The port carries no owner: the apply-job use case runs each job in its scope, and a batch of
  // posts fans out in its first post's job, as the claims in the database show.
  describe('through the apply-job use case on the MongoDB adapter', function () {
    this.timeout(60_000);
    const mongo = useMongo();
    let storage: TrayStorage;
    const members = ['u-m1', 'u-m2', 'u-m3'];
    // A window wide enough that two jobs started together always share one batch: with 50 ms, a
    // loaded CI machine once brought the second post after the first batch had left, and each
    // fanned out in its own job (two owners, each right for its own fan-out).
    const batches = keyedBatches<Activity>({ maxBatch: 32, gatherMs: 2_000 });
    const scheduleFanOut: ScheduleFanOut = (key, post, fanOut) => batches(key, post, fanOut);
    const run = (envelope: TestEnvelope) =>
      applyJob(jobDataOf(envelope), {
        storage,
        eventsRetentionDays: 30,
        trayRetentionDays: 90,
        networkId: 'default',
        scheduleFanOut,
      });
    const claims = () => mongo.db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS).find({}).toArray();

    before(async () => {
      storage = await openMongoStorage(testStack().mongoUri, mongo.dbName, {
        appName: 'tests',
        logger: pino({ level: 'silent' }),
      });
      await run(membershipEvent('join', members, 'c-own', minute(-10)));
      // New records are inserted, which takes no claim; the posts below update them.
      await run(postEvent({ postId: 'p-own-0', communityId: 'c-own', author: 'u-x', createdAt: minute(1) }));
    });
    after(() => storage.close());

    it('owns every claim of a batched fan-out by the job of one of its posts', async () => {
      const jobs = [2, 3].map((n) =>
        jobDataOf(
          postEvent({ postId: `p-own-${n}`, communityId: 'c-own', author: 'u-x', createdAt: minute(n) }),
        ),
      );
      await Promise.all(
        jobs.map((job) =>
          applyJob(job, {
            storage,
            eventsRetentionDays: 30,
            trayRetentionDays: 90,
            networkId: 'default',
            scheduleFanOut,
          }),
        ),
      );
      const owners = new Set((await claims()).map((claim) => claim.owner));
      expect(owners.size, [...owners].join(', ')).to.equal(1);
      expect(jobs.map((job) => job.dedupeKey)).to.include([...owners][0]);
    });
  });
});

import { expect } from 'chai';
import { TRAY_RECORD_CLAIMS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { claimVersions } from '../../../../../tray-service/storage/mongodb/compare-and-set/claim-versions.ts';
import { type RecordClaimDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-record-claims-collection.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

describe('claimVersions', () => {
  const mongo = useMongo();
  const now = new Date();
  const claim = (recordId: string, owner: string, ageMs: number, state?: string) =>
    mongo.db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS).insertOne({
      _id: `${recordId}#2`,
      owner,
      ...(state === undefined ? {} : { state }),
      claimedAt: new Date(now.getTime() - ageMs),
      expiresAt: new Date(now.getTime() + 3_600_000),
    });
  const claimAll = (owner: string) =>
    claimVersions(
      mongo.db,
      ['free', 'mine', 'mine-same', 'mine-other', 'mine-twin', 'theirs', 'dead'].map((recordId) => ({
        recordId,
        version: 2,
        state: `state-of-${recordId}`,
      })),
      {
        owner,
        takeoverMs: 60_000,
        now,
      },
    );

  describe('with free, own, concurrent and abandoned claims', () => {
    before(async () => {
      await claim('mine', 'job-a', 20_000);
      await claim('mine-same', 'job-a', 20_000, 'state-of-mine-same');
      await claim('mine-other', 'job-a', 20_000, 'another state');
      await claim('mine-twin', 'job-a', 1_000, 'state-of-mine-twin');
      await claim('theirs', 'job-b', 1_000);
      await claim('dead', 'job-c', 120_000);
    });

    it('wins the free one and its own for the same state (a retried job), loses the others', async () => {
      expect([...(await claimAll('job-a'))].sort()).to.deep.equal(['free', 'mine', 'mine-same']);
    });

    it('takes over a claim older than takeoverMs on the next attempt, never a recent one', async () => {
      const won = await claimAll('job-d');
      expect([...won]).to.include('dead');
      expect([...won]).not.to.include('theirs');
    });

    it('loses a claim of its own owner for another state: a concurrent write under one owner is no retry', async () => {
      expect([...(await claimAll('job-a'))]).not.to.include('mine-other');
    });

    // The same job taken up twice at once (after a queue failover): on FerretDB, whose updates are
    // not atomic, the second write of the same state could land after a later version and undo it.
    it('loses a recent claim of its own for the same state: the twin that took it may still be writing', async () => {
      expect([...(await claimAll('job-a'))]).not.to.include('mine-twin');
    });
  });
});

import { expect } from 'chai';
import { dayOf } from '../../../../shared/tray/storage-keys.ts';
import { TRAY_RECORD_CLAIMS } from '../../../../shared/tray/tray-record.ts';
import {
  claimVersions,
  type RecordClaimDoc,
} from '../../../../tray-service/storage/mongodb/claim-versions.ts';
import { useMongo } from '../../../support/suite-resources.ts';

describe('claimVersions', () => {
  const mongo = useMongo();
  const now = new Date();
  const claim = (recordId: string, owner: string, ageMs: number) =>
    mongo.db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS).insertOne({
      _id: `${recordId}#2`,
      owner,
      claimedAt: new Date(now.getTime() - ageMs),
      expiresAt: new Date(now.getTime() + 3_600_000),
      expiresDay: dayOf(now.getTime() + 3_600_000),
    });
  const claimAll = (owner: string) =>
    claimVersions(
      mongo.db,
      ['free', 'mine', 'theirs', 'dead'].map((recordId) => ({ recordId, version: 2 })),
      {
        owner,
        takeoverMs: 60_000,
        now,
      },
    );

  describe('with free, own, concurrent and abandoned claims', () => {
    before(async () => {
      await claim('mine', 'job-a', 1_000);
      await claim('theirs', 'job-b', 1_000);
      await claim('dead', 'job-c', 120_000);
    });

    it('wins the free one and its own (a retried job), loses the others', async () => {
      expect([...(await claimAll('job-a'))].sort()).to.deep.equal(['free', 'mine']);
    });

    it('takes over a claim older than takeoverMs on the next attempt, never a recent one', async () => {
      const won = await claimAll('job-d');
      expect([...won]).to.include('dead');
      expect([...won]).not.to.include('theirs');
    });
  });
});

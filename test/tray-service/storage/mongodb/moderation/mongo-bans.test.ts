import { expect } from 'chai';
import type { BanChange } from '../../../../../tray-service/domain/ban-change.ts';
import {
  applyBanChanges,
  newestPerUser,
  storedBanChanges,
} from '../../../../../tray-service/storage/mongodb/moderation/mongo-bans.ts';
import { userBansCollection } from '../../../../../tray-service/storage/mongodb/collections/user-bans-collection.ts';
import { USER_BAN_CHANGES } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const at = Date.parse('2026-11-20T11:00:00.000Z');

describe('the ban store (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [userBansCollection]));
  const state = async (userId: string) =>
    (await storedBanChanges(mongo.db)).find((change) => change.userId === userId);
  const documents = (userId: string) => mongo.db.collection(USER_BAN_CHANGES).countDocuments({ userId });

  it('keeps the newest change by createdAt, ignoring an older one stored after it', async () => {
    await applyBanChanges(mongo.db, [{ userId: 'u-eve', banned: true, at: at + 1 }]);
    await applyBanChanges(mongo.db, [{ userId: 'u-eve', banned: false, at }]);
    expect(await state('u-eve')).to.deep.equal({ userId: 'u-eve', banned: true, at: at + 1 });
  });

  it('is a no-op on a redelivery, lets a ban win a tie with an unban, and prunes the entries below a newer one', async () => {
    await applyBanChanges(mongo.db, [{ userId: 'u-fay', banned: false, at: at - 1 }]);
    await applyBanChanges(mongo.db, [{ userId: 'u-fay', banned: true, at }]);
    expect(await documents('u-fay')).to.equal(1);
    await applyBanChanges(mongo.db, [{ userId: 'u-fay', banned: true, at }]);
    await applyBanChanges(mongo.db, [{ userId: 'u-fay', banned: false, at }]);
    expect(await state('u-fay')).to.deep.equal({ userId: 'u-fay', banned: true, at });
  });

  it('ends at the newest change when many are stored concurrently', async () => {
    const changes: BanChange[] = Array.from({ length: 30 }, (_, n) => ({
      userId: 'u-gus',
      banned: n % 3 === 0,
      at: at + ((n * 7919) % 30) * 1_000,
    }));
    const newest = changes.reduce((a, b) => (b.at > a.at ? b : a));
    await Promise.all(changes.map((change) => applyBanChanges(mongo.db, [change])));
    expect(await state('u-gus')).to.deep.equal(newest);
  });
});

describe('newestPerUser', () => {
  it('picks each user’s highest-ranked change, a ban above an unban of the same time', () => {
    expect(
      newestPerUser([
        { userId: 'a', banned: true, at: 1 },
        { userId: 'b', banned: false, at: 5 },
        { userId: 'a', banned: false, at: 3 },
        { userId: 'b', banned: true, at: 5 },
        { userId: 'a', banned: true, at: 2 },
      ]),
    ).to.deep.equal([
      { userId: 'a', banned: false, at: 3 },
      { userId: 'b', banned: true, at: 5 },
    ]);
  });
});

import { expect } from 'chai';
import { MEMBERSHIP_CHANGES } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { MembershipChangeDoc } from '../../../../../tray-service/storage/mongodb/collections/membership-changes-collection.ts';
import { migrateMembershipProcessedAt } from '../../../../../tray-service/storage/mongodb/memberships/migrate-processed-at.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { membershipChangesCollection } from '../../../../../tray-service/storage/mongodb/collections/membership-changes-collection.ts';

const upgrade = Date.parse('2026-12-01T00:00:00.000Z');

const change = (at: number, processedAt?: number): MembershipChangeDoc => ({
  _id: JSON.stringify(['c-1', 'u-ana', at, true]),
  communityId: 'c-1',
  userId: 'u-ana',
  member: JSON.stringify(['c-1', 'u-ana']),
  joined: true,
  at,
  processed: 0,
  ...(processedAt === undefined ? {} : { processedAt }),
});

describe('migrateMembershipProcessedAt (membership changes of before their processing time)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [membershipChangesCollection]));

  it('gives each change without one the upgrade’s time, leaves the others, and runs once', async () => {
    const changes = mongo.db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
    await changes.insertMany([change(1), change(2), change(3, 42)]);
    expect(await migrateMembershipProcessedAt(mongo.db, upgrade)).to.equal(2);
    const stored = await changes
      .find({ communityId: 'c-1' }, { projection: { _id: 0, at: 1, processedAt: 1 } })
      .sort({ at: 1 })
      .toArray();
    expect(stored).to.deep.equal([
      { at: 1, processedAt: upgrade },
      { at: 2, processedAt: upgrade },
      { at: 3, processedAt: 42 },
    ]);
    // Recorded as run: a change an older worker stores without one later gets it at the next purge.
    await changes.insertOne(change(4));
    expect(await migrateMembershipProcessedAt(mongo.db, upgrade + 1)).to.equal(0);
  });
});

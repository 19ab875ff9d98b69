import { expect } from 'chai';
import {
  REMOVAL_CHANGES_LISTED,
  tallyRemovalChanges,
  type RemovalTrayChange,
} from '../../../../../tray-service/domain/removal-tray-change.ts';
import {
  TRAY_REMOVAL_CHANGES,
  TRAY_REMOVAL_OUTCOMES,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import type { RemovalOutcomeDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-removal-outcomes-collection.ts';
import { recordRemovalOutcome } from '../../../../../tray-service/storage/mongodb/removals/removal-outcomes.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

/** `count` members' post records shrunk, from member `from` on. */
const shrunk = (from: number, count: number): RemovalTrayChange[] =>
  Array.from({ length: count }, (_, i) => ({
    userId: `u-m${String(from + i).padStart(5, '0')}`,
    key: 'post:c-1',
    change: 'shrunk',
    before: { actorsCount: 2, actorIds: ['u-a', 'u-b'], lastActionId: 'p-2' },
    after: { actorsCount: 1, actorIds: ['u-a'], lastActionId: 'p-1' },
  }));

// Two runs of one removal event at once (a stalled job taken over while the first still runs)
// split the records between them, each changing its own. Both read how many changes were listed
// before either added its own, so both listed up to the bound: PostgreSQL reads that count under
// a row lock and stops at REMOVAL_CHANGES_LISTED; MongoDB listed both runs' changes.
describe('recordRemovalOutcome (MongoDB-compatible server)', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, workerCollections));
  const outcomeOf = (eventKey: string) =>
    mongo.db.collection<RemovalOutcomeDoc>(TRAY_REMOVAL_OUTCOMES).findOne({ _id: eventKey });
  const listedOf = (eventKey: string) =>
    mongo.db.collection(TRAY_REMOVAL_CHANGES).countDocuments({ eventKey });

  it('lists at most REMOVAL_CHANGES_LISTED changes when two runs of one event record theirs at once', async () => {
    const half = 800;
    const expiresAt = new Date(Date.now() + 86_400_000);
    await Promise.all([
      recordRemovalOutcome(
        mongo.db,
        'e-split',
        { voided: 1, tally: tallyRemovalChanges(shrunk(0, half)) },
        expiresAt,
      ),
      recordRemovalOutcome(
        mongo.db,
        'e-split',
        { voided: 0, tally: tallyRemovalChanges(shrunk(half, half)) },
        expiresAt,
      ),
    ]);
    const outcome = await outcomeOf('e-split');
    expect(outcome).to.deep.include({ voided: 1, shrunk: 2 * half, listed: REMOVAL_CHANGES_LISTED });
    expect(await listedOf('e-split')).to.equal(REMOVAL_CHANGES_LISTED);
  });

  it('keeps the later expiry of two runs, as PostgreSQL does', async () => {
    const later = new Date(Date.now() + 2 * 86_400_000);
    await recordRemovalOutcome(
      mongo.db,
      'e-expiry',
      { voided: 1, tally: tallyRemovalChanges(shrunk(0, 1)) },
      later,
    );
    // A run whose clock is behind, or with a shorter TRAY_RETENTION_DAYS.
    await recordRemovalOutcome(
      mongo.db,
      'e-expiry',
      { voided: 0, tally: tallyRemovalChanges([]) },
      new Date(Date.now() + 86_400_000),
    );
    expect((await outcomeOf('e-expiry'))?.expiresAt).to.deep.equal(later);
  });
});

import { expect } from 'chai';
import type { ModerationDecisionDoc } from '../../../../../tray-service/domain/decision-doc.ts';
import { MODERATION_DECISIONS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { purgeExpiredDecisions } from '../../../../../tray-service/storage/mongodb/moderation/purge-expired-decisions.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');

/** A decision as the collection holds it: its id as `_id`. */
type DecisionDoc = Omit<ModerationDecisionDoc, 'id'> & { _id: string };

// Pending decisions (kept until delivered or given up) hold the oldest expiries: each batch began
// again at the oldest and walked past all of them. One walk deletes behind it, batch after batch.
describe('purgeExpiredDecisions', () => {
  const mongo = useMongo();

  it('deletes every expired decision not pending, in batches along its expiry, past pending ones', async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    const decisions = mongo.db.collection<DecisionDoc>(MODERATION_DECISIONS);
    const decision = (n: number, delivery: DecisionDoc['delivery']): DecisionDoc => ({
      _id: `d-${n}`,
      eventKey: `e-${n}`,
      event: 'comment.didCreate',
      eventReceivedAt: new Date(t0),
      rule: 'blocked-words',
      action: 'flag',
      reason: 'r',
      subject: { type: 'comment', id: `cm-${n}` },
      decidedAt: new Date(t0),
      delivery,
      deliveryAttempts: 0,
      expiresAt: new Date(t0 + n * 1_000),
    });
    // Pending ones first by expiry, then delivered ones between and after them; one not expired.
    await decisions.insertMany([
      ...[0, 1, 2, 3].map((n) => decision(n, 'pending')),
      ...[4, 5, 6, 7, 8, 9, 10].map((n) => decision(n, n % 2 === 0 ? 'delivered' : 'off')),
      decision(11, 'pending'),
      decision(100, 'delivered'),
    ]);
    const purged = await purgeExpiredDecisions(mongo.db, new Date(t0 + 50_000), 2);
    expect(purged).to.equal(7);
    const left = (await decisions.find({}, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id);
    expect(left.sort()).to.deep.equal(['d-0', 'd-1', 'd-100', 'd-11', 'd-2', 'd-3']);
  });
});

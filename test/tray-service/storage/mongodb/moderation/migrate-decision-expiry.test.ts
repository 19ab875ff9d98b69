import { expect } from 'chai';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import {
  EVENTS,
  MODERATION_DECISIONS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  migrateDecisionExpiry,
  type PreExpiryDecisionDoc,
} from '../../../../../tray-service/storage/mongodb/moderation/migrate-decision-expiry.ts';
import type { StoredEventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { purgeExpired } from '../../../../../tray-service/storage/mongodb/purge-expired.ts';
import { createMongoDecisions } from '../../../../../tray-service/storage/mongodb/moderation/mongo-decisions.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');

function preExpiry(id: string, eventKey: string): PreExpiryDecisionDoc {
  return {
    _id: id,
    eventKey,
    event: 'comment.didCreate',
    eventReceivedAt: new Date(t0),
    rule: 'blocked-words',
    action: 'flag',
    reason: 'r',
    subject: { type: 'comment', id: `cm-${id}` },
    decidedAt: new Date(t0),
    delivery: 'off',
    deliveryAttempts: 0,
  };
}

// Decisions saved before they expired with their event get an expiry, as migration 0012 gives them
// on PostgreSQL.
describe('migrateDecisionExpiry (decisions of before their expiry)', () => {
  const mongo = useMongo();
  const eventExpiry = new Date(t0 + 7 * DAY_MS);

  before(async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    await mongo.db.collection<StoredEventDoc>(EVENTS).insertOne({
      _id: 'ev-stored',
      event: 'comment.didCreate',
      data: {},
      webhook: 'w',
      receivedAt: new Date(t0),
      storedAt: new Date(t0),
      expiresAt: eventExpiry,
      status: 'applied',
    });
    await mongo.db
      .collection<PreExpiryDecisionDoc>(MODERATION_DECISIONS)
      .insertMany([preExpiry('d-stored', 'ev-stored'), preExpiry('d-gone', 'ev-gone')]);
  });

  it('gives each its event’s expiry, or the receipt plus 30 days when the event is gone, once', async () => {
    expect(await migrateDecisionExpiry(mongo.db)).to.equal(2);
    const decisions = createMongoDecisions(mongo.db);
    expect((await decisions.get('d-stored'))?.expiresAt).to.deep.equal(eventExpiry);
    expect((await decisions.get('d-gone'))?.expiresAt).to.deep.equal(new Date(t0 + 30 * DAY_MS));
    expect(await migrateDecisionExpiry(mongo.db)).to.equal(0);
  });

  it('so the purge takes them when that expiry has passed', async () => {
    await purgeExpired(mongo.db, new Date(t0 + 10 * DAY_MS));
    const decisions = createMongoDecisions(mongo.db);
    expect(await decisions.get('d-stored')).to.equal(undefined);
    expect(await decisions.get('d-gone')).to.not.equal(undefined);
  });

  // A worker of before the expiry, still running in a rolling upgrade after the pass ran, saves
  // decisions without one: the purge gives them theirs, instead of keeping them for ever.
  it('and the purge gives one saved without an expiry after the pass its expiry too, then takes it once that passed', async () => {
    await mongo.db
      .collection<PreExpiryDecisionDoc>(MODERATION_DECISIONS)
      .insertOne(preExpiry('d-late', 'ev-gone-too'));
    await purgeExpired(mongo.db, new Date(t0 + 10 * DAY_MS));
    const decisions = createMongoDecisions(mongo.db);
    expect((await decisions.get('d-late'))?.expiresAt).to.deep.equal(new Date(t0 + 30 * DAY_MS));
    await purgeExpired(mongo.db, new Date(t0 + 31 * DAY_MS));
    expect(await decisions.get('d-late')).to.equal(undefined);
  });
});

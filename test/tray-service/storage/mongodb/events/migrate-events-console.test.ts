import { expect } from 'chai';
import { createLogger } from '../../../../../shared/logging/create-logger.ts';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { mapEvent } from '../../../../../tray-service/domain/map-event.ts';
import {
  EVENTS,
  MODERATION_DECISIONS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { StoredEventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { migrateEventsConsole } from '../../../../../tray-service/storage/mongodb/events/migrate-events-console.ts';
import type { ModerationDecisionDoc } from '../../../../../tray-service/domain/decision-doc.ts';
import { openMongoStorage } from '../../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import type { TrayStorage } from '../../../../../tray-service/storage/port.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import {
  commentEvent,
  membershipEvent,
  postEvent,
  userUpdateEvent,
  type TestEnvelope,
} from '../../../worker/event-builder.ts';

const MINUTE_MS = 60_000;
/** A whole minute an hour ago: the events are unexpired. */
const t0 = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS;

/** Events as releases before the events console stored them: no moderation, userId or communityId. */
const older: { key: string; envelope: TestEnvelope; status?: StoredEventDoc['status']; at?: number }[] = [
  { key: 'ev-post', envelope: postEvent({ author: 'u-spam', communityId: 'c-1' }) },
  { key: 'ev-comment', envelope: commentEvent({ author: 'u-3', feed: 'user', postOwner: 'u-3' }) },
  { key: 'ev-leave-two', envelope: membershipEvent('leave', ['u-7', 'u-8'], 'c-2') },
  { key: 'ev-update', envelope: userUpdateEvent({ userId: 'u-9' }) },
  { key: 'ev-invalid', envelope: { event: 'post.didCreate', data: { post: {} } }, status: 'invalid' },
  { key: 'ev-later', envelope: postEvent({ author: 'u-13' }), at: t0 + MINUTE_MS + 5 },
];

type DecisionDoc = Omit<ModerationDecisionDoc, 'id'> & { _id: string };

function decision(id: string, eventKey: string, action: 'flag' | 'ban-request', at: number): DecisionDoc {
  return {
    _id: id,
    eventKey,
    event: 'post.didCreate',
    eventReceivedAt: new Date(at),
    rule: 'blocked-words',
    action,
    reason: 'r',
    subject: { type: 'post', id: 'p' },
    decidedAt: new Date(at),
    expiresAt: new Date(at + 30 * DAY_MS),
    delivery: 'off',
    deliveryAttempts: 0,
  };
}

// After an upgrade from a release before the events console, its filters and chart see the older
// events as they see every later one, as migration 0014 gives them on PostgreSQL.
describe('migrateEventsConsole (events stored before the events console)', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  let storage: TrayStorage | undefined;

  before(async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    await mongo.db.collection<StoredEventDoc>(EVENTS).insertMany(
      older.map(({ key, envelope, status, at }) => ({
        _id: key,
        event: envelope.event,
        data: envelope.data,
        webhook: 'main',
        receivedAt: new Date(at ?? t0 + 10),
        storedAt: new Date(at ?? t0 + 10),
        expiresAt: new Date((at ?? t0) + 30 * DAY_MS),
        status: status ?? 'applied',
      })),
    );
    await mongo.db.collection<DecisionDoc>(MODERATION_DECISIONS).insertMany([
      decision('d1', 'ev-post', 'flag', t0 + 10),
      decision('d2', 'ev-comment', 'flag', t0 + 10),
      decision('d3', 'ev-comment', 'ban-request', t0 + 10),
      // About an earlier delivery of the same key, which expired before this one was stored.
      decision('d4', 'ev-update', 'flag', t0 - 31 * DAY_MS),
    ]);
    storage = await openMongoStorage(testStack().mongoUri, mongo.dbName, {
      appName: 'tests',
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });
  after(async () => {
    await storage?.close();
  });

  const keys = async (filter: Parameters<TrayStorage['events']['list']>[0]) =>
    (await storage!.events.list(filter, 50)).items.map((event) => event.key).sort();

  it('gives them the moderation outcome of their decisions, at storage open', async () => {
    expect(await keys({ moderation: 'any' })).to.deep.equal(['ev-comment', 'ev-post']);
    expect(await keys({ moderation: 'flag' })).to.deep.equal(['ev-post']);
    expect(await keys({ moderation: 'ban-request' })).to.deep.equal(['ev-comment']);
    expect(await keys({ moderation: 'none' })).to.deep.equal([
      'ev-invalid',
      'ev-later',
      'ev-leave-two',
      'ev-update',
    ]);
  });

  it('gives them the acting user and community the mapping gives them', async () => {
    for (const { key, envelope } of older) {
      const { subject } = mapEvent({ ...envelope, receivedAt: t0 });
      const event = await storage!.events.get(key);
      expect({ userId: event?.userId, communityId: event?.communityId }, key).to.deep.equal({
        userId: subject?.userId,
        communityId: subject?.communityId,
      });
    }
    expect(await keys({ userId: 'u-spam' })).to.deep.equal(['ev-post']);
    expect(await keys({ communityId: 'c-2' })).to.deep.equal(['ev-leave-two']);
  });

  it('counts them into the events-per-minute chart', async () => {
    const minutes = await storage!.events.perMinute(new Date(t0), new Date(t0 + 2 * MINUTE_MS));
    expect(minutes).to.deep.equal([
      {
        minute: new Date(t0),
        counts: { 'post.didCreate': 2, 'comment.didCreate': 1, 'community.didLeave': 1, 'user.didUpdate': 1 },
      },
      { minute: new Date(t0 + MINUTE_MS), counts: { 'post.didCreate': 1 } },
    ]);
  });

  it('runs once per database', async () => {
    expect(await migrateEventsConsole(mongo.db)).to.equal(0);
    const minutes = await storage!.events.perMinute(new Date(t0), new Date(t0 + 2 * MINUTE_MS));
    expect(minutes[1]?.counts).to.deep.equal({ 'post.didCreate': 1 });
  });
});

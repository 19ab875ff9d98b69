import { expect } from 'chai';
import { BSON } from 'mongodb';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import type { StoredEvent } from '../../../../../tray-service/domain/stored-event.ts';
import { EVENTS } from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import type { EventDoc } from '../../../../../tray-service/storage/mongodb/events/events-collection.ts';
import { createMongoEvents } from '../../../../../tray-service/storage/mongodb/events/mongo-events.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

/** MongoDB's largest document: 16 MiB of BSON. */
const MAX_BSON_BYTES = 16 * 1024 * 1024;
const MINUTE = 60_000;
const receivedAt = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE);
const keep = { retentionDays: 7, now: new Date(receivedAt.getTime() + 1_000) };

type NewEvent = Omit<StoredEvent, 'storedAt' | 'expiresAt' | 'status' | 'error'>;

const delivery = (key: string, data: Record<string, unknown>): NewEvent => ({
  key,
  event: 'post.didCreate',
  data,
  webhook: 'wh-main',
  receivedAt,
});

describe('storage/mongodb events', () => {
  const mongo = useMongo();
  const events = () => createMongoEvents(mongo.db);

  // A webhook body may be up to WEBHOOK_MAX_BODY_BYTES (64 MB at most), and a JSON array of numbers
  // grows about sixfold in BSON (a type byte, the index as a key and 8 bytes per number): an event
  // MongoDB cannot hold as one document is still stored, or its job would fail on every attempt.
  it('stores an event too large for a MongoDB document with a marker in place of its payload, every other field kept', async function () {
    this.timeout(60_000);
    // 3 MB of JSON, about 18 MB of BSON.
    const data = { post: { postId: 'p-big' }, list: new Array<number>(1_500_000).fill(0) };
    const bsonBytes = BSON.calculateObjectSize(data);
    expect(bsonBytes).to.be.above(MAX_BSON_BYTES);
    const activity = aPost('u-ana', { id: 'p-big', at: receivedAt.getTime() - 1_000 });
    const stored = await events().store(
      delivery('big', data),
      {
        status: 'applied',
        userId: 'u-ana',
        communityId: 'c-hike',
        communityPost: { communityId: 'c-hike', at: activity.at, activity },
      },
      keep,
    );
    expect(stored).to.deep.equal({
      key: 'big',
      event: 'post.didCreate',
      data: { payloadNotKept: { reason: 'larger than a MongoDB document may be', bsonBytes } },
      webhook: 'wh-main',
      receivedAt,
      storedAt: keep.now,
      expiresAt: new Date(receivedAt.getTime() + keep.retentionDays * DAY_MS),
      status: 'applied',
      error: `payload not kept: ${bsonBytes} bytes of BSON, too large for a MongoDB document (under ${MAX_BSON_BYTES} bytes)`,
      userId: 'u-ana',
      communityId: 'c-hike',
    });
    expect(await events().get('big')).to.deep.equal(stored);
    // A late join still finds the post: its activity is kept beside the marker.
    const doc = await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'big' });
    expect(doc?.postActivity).to.deep.equal(activity);
    expect(doc?.communityDay).to.be.a('string');
    // Counted once, as any stored event; a redelivery gets it as stored.
    const counted = await events().perMinute(receivedAt, new Date(receivedAt.getTime() + MINUTE));
    expect(counted).to.deep.equal([{ minute: receivedAt, counts: { 'post.didCreate': 1 } }]);
    expect(await events().store(delivery('big', data), { status: 'applied' }, keep)).to.deep.equal(stored);
  });

  it('keeps an invalid event’s own error before saying why its payload was not kept', async function () {
    this.timeout(60_000);
    const data = { list: new Array<number>(1_500_000).fill(1) };
    const stored = await events().store(
      delivery('big-invalid', data),
      { status: 'invalid', error: 'data.post: required' },
      keep,
    );
    expect(stored.status).to.equal('invalid');
    expect(stored.error).to.match(/^data\.post: required; payload not kept: \d+ bytes of BSON/);
  });

  it('keeps a payload whole as long as its document fits: up to one byte under 16 MiB, the largest the driver sends', async function () {
    this.timeout(60_000);
    const fitting = (key: string, extra: number) => {
      // The document's size without the padding, then a padding that brings it to the limit + extra.
      const probe = { ...delivery(key, { pad: '' }) };
      const base = BSON.calculateObjectSize({
        _id: probe.key,
        event: probe.event,
        data: probe.data,
        webhook: probe.webhook,
        receivedAt,
        storedAt: keep.now,
        expiresAt: receivedAt,
        status: 'stored',
        moderation: 'none',
      });
      return delivery(key, { pad: 'x'.repeat(MAX_BSON_BYTES - base + extra) });
    };
    const whole = fitting('under-limit', -1);
    expect((await events().store(whole, { status: 'stored' }, keep)).data).to.deep.equal(whole.data);
    const over = fitting('at-limit', 0);
    expect((await events().store(over, { status: 'stored' }, keep)).data).to.have.property('payloadNotKept');
  });
  // FerretDB refuses a field name starting with `$` or holding a `.` anywhere in a document.
  it('stores a payload with keys no field name may be with its keys escaped, and says so; any other as received', async () => {
    const data = { post: { postId: 'p-keys', metadata: { $type: 'x', 'a.b': [{ '%': 1 }] } } };
    const stored = await events().store(delivery('escaped', data), { status: 'stored' }, keep);
    expect(stored.data).to.deep.equal(data);
    const doc = await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'escaped' });
    expect(doc?.data).to.deep.equal({
      post: { postId: 'p-keys', metadata: { '%24type': 'x', 'a%2Eb': [{ '%25': 1 }] } },
    });
    expect(doc?.keysEscaped).to.equal(true);

    const plain = { post: { postId: 'p-plain', note: { '%24': 'as sent' } } };
    await events().store(delivery('plain', plain), { status: 'stored' }, keep);
    const plainDoc = await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'plain' });
    expect(plainDoc?.data).to.deep.equal(plain);
    expect(plainDoc).to.not.have.property('keysEscaped');
    expect((await events().get('plain'))?.data).to.deep.equal(plain);
  });
});

import { expect } from 'chai';
import { BSON, MongoClient, type Db } from 'mongodb';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import type { StoredEvent } from '../../../../../tray-service/domain/stored-event.ts';
import {
  EVENT_LAG_MINUTES,
  EVENT_MINUTES,
  EVENTS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { EventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { createMongoEvents } from '../../../../../tray-service/storage/mongodb/events/mongo-events.ts';
import { createEventRollups } from '../../../../../tray-service/storage/mongodb/events/event-rollups.ts';
import { eventDocument } from '../../../../../tray-service/storage/mongodb/events/event-document.ts';
import { LATER_FIELDS_BYTES } from '../../../../../tray-service/storage/mongodb/events/within-document-limit.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { STREAM_BATCH } from '../../../../../tray-service/storage/stream-events.ts';

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

/**
 * `db`, whose `events` run `meanwhile` once, right after their next findOne has read: another
 * process's steps between two of this one's, on the real server.
 */
function afterNextRead(db: Db, meanwhile: () => Promise<void>): Db {
  let step: (() => Promise<void>) | undefined = meanwhile;
  const events = db.collection<EventDoc>(EVENTS);
  const readThenStep = new Proxy(events, {
    get(target, property) {
      if (property === 'findOne')
        return async (...args: Parameters<typeof target.findOne>) => {
          const found = await target.findOne(...args);
          const now = step;
          step = undefined;
          await now?.();
          return found;
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return new Proxy(db, {
    get(target, property) {
      if (property === 'collection')
        return (name: string) => (name === EVENTS ? readThenStep : target.collection(name));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

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

  it('keeps a payload whole as long as its document fits with room for its later fields: up to one byte under 16 MiB less that room', async function () {
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
        countPending: true,
      });
      return delivery(key, { pad: 'x'.repeat(MAX_BSON_BYTES - base + extra) });
    };
    const whole = fitting('under-limit', -1 - LATER_FIELDS_BYTES);
    expect((await events().store(whole, { status: 'stored' }, keep)).data).to.deep.equal(whole.data);
    const over = fitting('at-limit', -LATER_FIELDS_BYTES);
    expect((await events().store(over, { status: 'stored' }, keep)).data).to.have.property('payloadNotKept');
  });
  describe("a replay's new verdict (restate)", () => {
    const post = (id: string) => {
      const activity = aPost('u-ana', { id, at: receivedAt.getTime() - 1_000 });
      return {
        status: 'applied' as const,
        userId: 'u-ana',
        communityId: 'c-hike',
        communityPost: { communityId: 'c-hike', at: activity.at, activity },
      };
    };

    it('leaves an event whose payload was replaced by its marker as it is: the replay read the marker', async function () {
      this.timeout(60_000);
      const data = { list: new Array<number>(1_500_000).fill(2) };
      const stored = await events().store(delivery('big-unknown', data), { status: 'unknown' }, keep);
      expect(stored.data).to.have.property('payloadNotKept');
      expect(await events().restate('big-unknown', post('p-marker'), keep.now)).to.deep.equal(stored);
    });

    it("stores it without its post's activity when the document would pass its limit, and says why", async function () {
      this.timeout(60_000);
      // Fits as stored (`unknown`, no post), with under 300 bytes to spare: the post's fields do not.
      const base = BSON.calculateObjectSize(
        eventDocument(delivery('near-limit', { pad: '' }), { status: 'unknown' }, 7, keep.now),
      );
      const padded = delivery('near-limit', {
        pad: 'x'.repeat(MAX_BSON_BYTES - LATER_FIELDS_BYTES - base - 300),
      });
      expect((await events().store(padded, { status: 'unknown' }, keep)).data).to.deep.equal(padded.data);
      const restated = await events().restate('near-limit', post('p-near'), keep.now);
      expect(restated).to.deep.include({ status: 'applied', userId: 'u-ana', communityId: 'c-hike' });
      expect(restated?.error).to.equal(
        "post's activity not kept, for a late join: too large for a MongoDB document beside the payload",
      );
      const doc = await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'near-limit' });
      expect(doc).not.to.have.property('postActivity');
      expect(doc).not.to.have.property('communityDay');
      // A small one gets them.
      await events().store(delivery('small', { post: { postId: 'p-small' } }), { status: 'unknown' }, keep);
      await events().restate('small', post('p-small'), keep.now);
      const small = await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'small' });
      expect(small?.postActivity?.lastActionId).to.equal('p-small');
      expect(small).not.to.have.property('error');
    });
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
  // No transaction joins an event to its counts (FerretDB has none): each is its own write, and a
  // write that fails fails the job, which the queue retries. A document of the chart's in the way
  // (a count that is not a number) makes the count's write fail for real, as a server error would.
  describe('a stream (an export, a replay) read slowly', () => {
    it('holds no server cursor open while its consumer works: MongoDB closes one idle for 10 minutes', async function () {
      this.timeout(60_000);
      const total = STREAM_BATCH * 2 + 7;
      const docs = Array.from({ length: total }, (_, n) =>
        eventDocument(
          {
            ...delivery(`stream-${String(n).padStart(5, '0')}`, {}),
            event: 'stream.read',
            receivedAt: new Date(receivedAt.getTime() - (n % 50)),
          },
          { status: 'applied' },
          7,
          keep.now,
        ),
      );
      await mongo.db.collection<EventDoc>(EVENTS).insertMany(docs);
      // Cursors the server holds for this client, from its command replies: a find or getMore
      // whose reply names a cursor id other than 0 left it open; one answering 0, or a
      // killCursors, closed it.
      const client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
      const open = new Set<string>();
      const cursorOf = new Map<number, string>();
      client.on('commandStarted', (event) => {
        const command = event.command as { getMore?: unknown; cursors?: unknown[] };
        if (event.commandName === 'getMore') cursorOf.set(event.requestId, String(command.getMore));
        if (event.commandName === 'killCursors')
          for (const id of command.cursors ?? []) open.delete(String(id));
      });
      client.on('commandSucceeded', (event) => {
        const id = (event.reply as { cursor?: { id?: unknown } }).cursor?.id;
        if (id === undefined) return;
        if (String(id) !== '0') open.add(String(id));
        else open.delete(cursorOf.get(event.requestId) ?? '');
      });
      const seen: string[] = [];
      try {
        await client.connect();
        const events = createMongoEvents(client.db(mongo.dbName));
        for await (const event of events.stream({ event: 'stream.read' })) {
          expect(open.size, `server cursors open while event ${seen.length} is handled`).to.equal(0);
          seen.push(event.key);
        }
      } finally {
        await client.close();
      }
      expect(seen).to.have.lengthOf(total);
      const order = docs
        .map((doc) => [doc.receivedAt.getTime(), doc._id] as const)
        .sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? 1 : -1))
        .map(([, key]) => key);
      expect(seen).to.deep.equal(order);
    });
  });

  describe('a chart count that fails, then the job’s retry', () => {
    const minuteOf = (at: Date) => new Date(Math.floor(at.getTime() / MINUTE) * MINUTE);
    const chartRange = [receivedAt, new Date(receivedAt.getTime() + MINUTE)] as const;

    // FerretDB 1.24 ignores a `$pull` with `$in` without an error: every token stayed, and a
    // minute's document grew by one with each event counted into it, each increment checking
    // them all.
    it("takes each count's token off its minute once its event is marked counted", async () => {
      const event = 'tokens.released';
      // A minute of its own: the other cases count this one's lags.
      const at = new Date(receivedAt.getTime() - 10 * MINUTE);
      const stored = await events().store(
        { ...delivery('tokens-released', {}), event, receivedAt: at },
        { status: 'applied' },
        keep,
      );
      expect(await events().markApplied(stored, new Date(at.getTime() + 1_000))).to.equal(true);
      const minute = await mongo.db
        .collection<{ _id: string; pending?: string[] }>(EVENT_MINUTES)
        .findOne({ _id: `${minuteOf(at).toISOString()}|${event}` });
      expect(minute?.pending ?? []).to.deep.equal([]);
      const lag = await mongo.db
        .collection<{ _id: string; pending?: string[] }>(EVENT_LAG_MINUTES)
        .findOne({ _id: minuteOf(at).toISOString() });
      expect((lag?.pending ?? []).filter((token) => token.startsWith('tokens-released|'))).to.deep.equal([]);
    });

    it('counts the stored event into its minute once, at the retry', async () => {
      const event = 'fault.stored';
      const blocking = { _id: `${minuteOf(receivedAt).toISOString()}|${event}`, count: 'not a number' };
      await mongo.db.collection<{ _id: string }>(EVENT_MINUTES).insertOne(blocking);
      const job = () =>
        events().store({ ...delivery('fault-stored', {}), event }, { status: 'applied' }, keep);
      await expect(job()).to.be.rejected;
      await mongo.db.collection<{ _id: string }>(EVENT_MINUTES).deleteOne({ _id: blocking._id });
      await job();
      await job();
      const counts = (await events().perMinute(...chartRange)).map((minute) => minute.counts[event]);
      expect(counts).to.deep.equal([1]);
      expect(await events().count({ event })).to.equal(1);
    });

    // What a process stopped (or a reply lost) right after a count leaves: the count made, the
    // event still marked pending. The retry finishes it without counting again.
    it('counts nothing twice when the count was made but its event not yet marked counted', async () => {
      const event = 'fault.counted';
      const doc = eventDocument(
        { ...delivery('fault-counted', {}), event },
        { status: 'applied' },
        7,
        keep.now,
      );
      await mongo.db.collection<EventDoc>(EVENTS).insertOne(doc);
      await createEventRollups(mongo.db).countStored(doc);
      await events().store({ ...delivery('fault-counted', {}), event }, { status: 'applied' }, keep);
      const counts = (await events().perMinute(...chartRange)).map((minute) => minute.counts[event]);
      expect(counts).to.deep.equal([1]);
      expect(
        await mongo.db.collection<EventDoc>(EVENTS).findOne({ _id: 'fault-counted' }),
      ).to.not.have.property('countPending');

      const appliedAt = new Date(receivedAt.getTime() + 3_000);
      await mongo.db
        .collection<EventDoc>(EVENTS)
        .updateOne({ _id: 'fault-counted' }, { $set: { appliedAt, lagPending: true } });
      await createEventRollups(mongo.db).countApplied(doc, appliedAt);
      const stored = await events().store(
        { ...delivery('fault-counted', {}), event },
        { status: 'applied' },
        keep,
      );
      // Nobody said it was first yet: the retry does, and counts its lag once.
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(true);
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(false);
      const lag = await events().lagPerMinute(...chartRange);
      expect(lag.map((minute) => [minute.count, minute.maxMs])).to.deep.equal([[1, 3_000]]);
    });

    // A replay of an event while its job runs (an admin replaying the last minutes): it read the
    // event's pending mark, then the job took the mark off and released its count's token, and
    // finishing that count counted the event twice. A call finishing another's count takes the
    // mark over first, and finds it gone.
    it("counts nothing twice when the maker takes its mark off and releases its token between another call's read and its count", async () => {
      const event = 'race.replay';
      const key = 'race-replay';
      const rollups = createEventRollups(mongo.db);
      const collection = mongo.db.collection<EventDoc>(EVENTS);
      // The job's state when the replay reads the event: stored, its count made, its mark still on.
      const job = eventDocument({ ...delivery(key, {}), event }, { status: 'applied' }, 7, keep.now);
      await collection.insertOne(job);
      await rollups.countStored(job);
      const replay = createMongoEvents(
        afterNextRead(mongo.db, async () => {
          // Then the job finishes: its mark off, its token released.
          await collection.updateOne({ _id: key }, { $unset: { countPending: '' } });
          await rollups.releaseStored(job);
        }),
      );
      const stored = await replay.store({ ...delivery(key, {}), event }, { status: 'applied' }, keep);
      expect((await events().perMinute(...chartRange)).map((minute) => minute.counts[event])).to.deep.equal([
        1,
      ]);

      // The same for the applied mark's lag (its minute holds other tests' lags too).
      const lagTotal = async () =>
        (await events().lagPerMinute(...chartRange)).map((minute) => minute.count).reduce((a, b) => a + b, 0);
      const lagBefore = await lagTotal();
      const appliedAt = new Date(receivedAt.getTime() + 2_000);
      await collection.updateOne({ _id: key }, { $set: { appliedAt, lagPending: true } });
      await rollups.countApplied(job, appliedAt);
      const replayMark = createMongoEvents(
        afterNextRead(mongo.db, async () => {
          await collection.updateOne({ _id: key }, { $unset: { lagPending: '' } });
          await rollups.releaseApplied(job);
        }),
      );
      expect(await replayMark.markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(false);
      expect(await lagTotal()).to.equal(lagBefore + 1);
    });

    // A mark whose maker stopped (its process gone, its job out of attempts) is finished by the
    // next call, whoever it is: a replay from the console too.
    it('finishes a count whose maker stopped, and its lag, once, whoever calls next', async () => {
      const event = 'stuck.mark';
      const key = 'stuck-mark';
      const doc = eventDocument({ ...delivery(key, {}), event }, { status: 'applied' }, 7, keep.now);
      await mongo.db.collection<EventDoc>(EVENTS).insertOne({ ...doc, countPending: 'a-stopped-call' });
      const stored = await events().store({ ...delivery(key, {}), event }, { status: 'applied' }, keep);
      await events().store({ ...delivery(key, {}), event }, { status: 'applied' }, keep);
      expect((await events().perMinute(...chartRange)).map((minute) => minute.counts[event])).to.deep.equal([
        1,
      ]);
      const lagTotal = async () =>
        (await events().lagPerMinute(...chartRange)).map((minute) => minute.count).reduce((a, b) => a + b, 0);
      const lagBefore = await lagTotal();
      const appliedAt = new Date(receivedAt.getTime() + 4_000);
      await mongo.db
        .collection<EventDoc>(EVENTS)
        .updateOne({ _id: key }, { $set: { appliedAt, lagPending: 'another-stopped-call' } });
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(true);
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(false);
      expect(await lagTotal()).to.equal(lagBefore + 1);
    });

    it('counts the lag once and makes the retry’s mark the first (the one the live tail announces)', async () => {
      const lagReceived = new Date(receivedAt.getTime() - 5 * MINUTE);
      const stored = await events().store(
        { ...delivery('fault-applied', {}), event: 'fault.applied', receivedAt: lagReceived },
        { status: 'applied' },
        keep,
      );
      const blocking = { _id: minuteOf(lagReceived).toISOString(), count: 'not a number' };
      await mongo.db.collection<{ _id: string }>(EVENT_LAG_MINUTES).insertOne(blocking);
      const appliedAt = new Date(lagReceived.getTime() + 2_000);
      await expect(events().markApplied(stored, appliedAt)).to.be.rejected;
      await mongo.db.collection<{ _id: string }>(EVENT_LAG_MINUTES).deleteOne({ _id: blocking._id });
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + MINUTE))).to.equal(true);
      expect(await events().markApplied(stored, new Date(appliedAt.getTime() + 2 * MINUTE))).to.equal(false);
      const lag = await events().lagPerMinute(lagReceived, new Date(lagReceived.getTime() + MINUTE));
      // The lag of the mark that was stored: the first attempt's.
      expect(lag.map((minute) => [minute.count, minute.maxMs])).to.deep.equal([[1, 2_000]]);
      expect((await events().get('fault-applied'))?.appliedAt).to.deep.equal(appliedAt);
    });
  });
});

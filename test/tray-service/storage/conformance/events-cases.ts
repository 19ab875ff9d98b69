import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { StoredEvent } from '../../../../tray-service/domain/stored-event.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { aPost } from '../../../support/activity-builder.ts';
import { postEvent } from './apply-operation.ts';
import { at, MINUTE, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';

/** Stored events (EventsPort): stored once per dedupe key, listed newest first, streamed, counted. */

/** Received within the last hour (the events' retention runs on the real clock). */
const received = (minutesAgo: number) =>
  new Date(Math.floor(Date.now() / MINUTE) * MINUTE - minutesAgo * MINUTE);

async function storeSix(storage: TrayStorage, webhook: string, tag: string): Promise<StoredEvent[]> {
  const stored: StoredEvent[] = [];
  const kinds = ['comment.didCreate', 'post.didCreate', 'follow.didCreate'];
  for (let index = 0; index < 6; index++) {
    stored.push(
      await storage.events.store(
        {
          key: `${tag}-${index}`,
          event: kinds[index % 3] as string,
          data: { index, nested: { text: `é ${index}` } },
          webhook,
          // Two share a receivedAt: the key orders them.
          receivedAt: received(index === 5 ? 4 : 10 - index),
        },
        index === 2
          ? { status: 'unknown' }
          : index === 4
            ? { status: 'invalid', error: 'data.post: required' }
            : { status: 'applied' },
        { retentionDays: 7, now: received(0) },
      ),
    );
  }
  return stored;
}

/** Newest first: receivedAt, then key, both descending. */
const newestFirst = (a: StoredEvent, b: StoredEvent) =>
  b.receivedAt.getTime() - a.receivedAt.getTime() || (a.key < b.key ? 1 : -1);

conformanceCase(
  'events: stored once per key; a redelivery gets the event as first stored',
  async ({ storage, id }) => {
    const key = id('ev');
    const first = await storage.events.store(
      { key, event: 'comment.didCreate', data: { a: 1 }, webhook: id('wh'), receivedAt: received(5) },
      { status: 'applied' },
      { retentionDays: 7, now: received(1) },
    );
    expect(first).to.deep.equal({
      key,
      event: 'comment.didCreate',
      data: { a: 1 },
      webhook: id('wh'),
      receivedAt: received(5),
      storedAt: received(1),
      expiresAt: new Date(received(5).getTime() + 7 * DAY_MS),
      status: 'applied',
    });
    const again = await storage.events.store(
      { key, event: 'comment.didCreate', data: { a: 2 }, webhook: id('wh'), receivedAt: received(3) },
      { status: 'invalid', error: 'changed' },
      { retentionDays: 7, now: received(0) },
    );
    expect(again).to.deep.equal(first);
    expect(await storage.events.get(key)).to.deep.equal(first);
    expect(await storage.events.get(id('missing'))).to.equal(undefined);
  },
);

// Another sender's event (docs/receiver.md#what-a-standard-webhooks-sender-gets): every status the
// domain has is one each engine keeps and filters by (PostgreSQL's stored_events checks the list).
conformanceCase(
  'events: a `foreign` event is stored, kept by a redelivery, and listed and counted by its status',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const key = id('ev');
    const event = {
      key,
      event: 'user.didGlobalBan',
      data: { userIds: ['u-1'] },
      webhook,
      receivedAt: received(5),
    };
    const first = await storage.events.store(
      event,
      { status: 'foreign' },
      { retentionDays: 7, now: received(1) },
    );
    expect(first).to.deep.include({ key, status: 'foreign' });
    expect(first).to.not.have.any.keys('error', 'userId', 'communityId');
    // A redelivery judged otherwise (the setting changed meanwhile) gets the verdict stored first.
    const again = await storage.events.store(
      event,
      { status: 'applied', userId: 'u-1' },
      {
        retentionDays: 7,
        now: received(0),
      },
    );
    expect(again).to.deep.equal(first);
    expect(
      (await storage.events.list({ webhook, status: 'foreign' }, 10)).items.map((item) => item.key),
    ).to.deep.equal([key]);
    expect(await storage.events.count({ webhook, status: 'foreign' })).to.equal(1);
    expect(await storage.events.count({ webhook, status: 'applied' })).to.equal(0);
  },
);

conformanceCase(
  'events: every read carries the expiry set when the event was stored, whatever the retention now',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const key = id('ev');
    const receivedAt = received(5);
    const expiresAt = new Date(receivedAt.getTime() + 30 * DAY_MS);
    await storage.events.store(
      { key, event: 'comment.didCreate', data: {}, webhook, receivedAt },
      { status: 'applied' },
      { retentionDays: 30, now: received(1) },
    );
    // A redelivery stored under a shorter retention (EVENTS_RETENTION_DAYS lowered since) moves nothing.
    const again = await storage.events.store(
      { key, event: 'comment.didCreate', data: {}, webhook, receivedAt },
      { status: 'applied' },
      { retentionDays: 1, now: received(0) },
    );
    expect(again.expiresAt).to.deep.equal(expiresAt);
    await storage.events.markApplied(again, received(0));
    expect((await storage.events.get(key))?.expiresAt).to.deep.equal(expiresAt);
    expect((await storage.events.list({ webhook }, 10)).items.map((event) => event.expiresAt)).to.deep.equal([
      expiresAt,
    ]);
    const streamed: Date[] = [];
    for await (const event of storage.events.stream({ webhook })) streamed.push(event.expiresAt);
    expect(streamed).to.deep.equal([expiresAt]);
  },
);

conformanceCase(
  'events: list pages newest first by receivedAt then key, with filters',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const stored = (await storeSix(storage, webhook, id('ev'))).sort(newestFirst);
    const first = await storage.events.list({ webhook }, 4);
    expect(first.items).to.deep.equal(stored.slice(0, 4));
    expect(first.next).to.not.equal(undefined);
    const second = await storage.events.list({ webhook }, 4, first.next);
    expect(second.items).to.deep.equal(stored.slice(4));
    expect(second.next).to.equal(undefined);
    expect((await storage.events.list({ webhook, event: 'post.didCreate' }, 10)).items).to.deep.equal(
      stored.filter((event) => event.event === 'post.didCreate'),
    );
    expect(
      (await storage.events.list({ webhook, status: 'invalid' }, 10)).items.map((event) => event.error),
    ).to.deep.equal(['data.post: required']);
    const since = received(8);
    const until = received(4);
    expect((await storage.events.list({ webhook, since, until }, 10)).items).to.deep.equal(
      stored.filter((event) => event.receivedAt >= since && event.receivedAt < until),
    );
  },
);

conformanceCase(
  'events: stream yields every match newest first; count counts them',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const stored = (await storeSix(storage, webhook, id('ev'))).sort(newestFirst);
    const streamed: StoredEvent[] = [];
    for await (const event of storage.events.stream({ webhook })) streamed.push(event);
    expect(streamed).to.deep.equal(stored);
    expect(await storage.events.count({ webhook })).to.equal(6);
    // Counted up to a bound: a caller that refuses more than it needs no count of the rest.
    expect(await storage.events.count({ webhook }, undefined, 4)).to.equal(4);
    expect(await storage.events.count({ webhook }, undefined, 10)).to.equal(6);
    expect(await storage.events.count({ webhook, status: 'applied' })).to.equal(4);
    expect(await storage.events.count({ webhook: id('none') })).to.equal(0);
  },
);

conformanceCase(
  'events: expired events are neither listed, got, streamed nor counted',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const old = new Date(Date.now() - 3 * 24 * 60 * MINUTE);
    await storage.events.store(
      { key: id('old'), event: 'post.didCreate', data: {}, webhook, receivedAt: old },
      { status: 'applied' },
      { retentionDays: 1, now: old },
    );
    expect((await storage.events.list({ webhook }, 10)).items).to.deep.equal([]);
    expect(await storage.events.get(id('old'))).to.equal(undefined);
    expect(await storage.events.count({ webhook })).to.equal(0);
  },
);

// A job that failed and was replayed after the retention had passed since its receipt: applied to
// the trays now, so the moderation and analytics store must hold it too (stored expired, it was
// neither shown, counted nor marked applied, and purged within the hour).
conformanceCase(
  'events: one stored after its retention since receipt is kept the retention from its storing, and marked applied once',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const key = id('late');
    const now = received(0);
    const old = new Date(now.getTime() - 35 * DAY_MS);
    const stored = await storage.events.store(
      { key, event: 'post.didCreate', data: { v: 1 }, webhook, receivedAt: old },
      { status: 'applied' },
      { retentionDays: 30, now },
    );
    expect(stored.expiresAt).to.deep.equal(new Date(now.getTime() + 30 * DAY_MS));
    expect(await storage.events.get(key)).to.deep.equal(stored);
    expect((await storage.events.list({ webhook }, 10)).items).to.deep.equal([stored]);
    expect(await storage.events.count({ webhook })).to.equal(1);
    expect(await storage.events.markApplied(stored, now)).to.equal(true);
    expect(await storage.events.markApplied(stored, now)).to.equal(false);
  },
);

// The purge runs hourly (or less often): meanwhile an expired event counts as gone, so a
// redelivery of its key (a platform resend after the retention, a replay) is stored anew and
// shown, counted and announced like any new event.
conformanceCase(
  'events: a redelivery of an expired event not yet purged is stored anew, listed, counted and marked applied once',
  async ({ isolated, id }) => {
    const storage = await isolated();
    // Read once: the case must not straddle two minutes.
    const [at3, at2, at1, at0] = [3, 2, 1, 0].map(received) as [Date, Date, Date, Date];
    const webhook = id('wh');
    const key = id('again');
    const old = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 3 * 24 * 60 * MINUTE);
    const expired = await storage.events.store(
      { key, event: 'post.didCreate', data: { v: 1 }, webhook, receivedAt: old },
      { status: 'applied' },
      { retentionDays: 1, now: old },
    );
    expect(await storage.events.markApplied(expired, new Date(old.getTime() + 10))).to.equal(true);
    const stored = await storage.events.store(
      { key, event: 'comment.didCreate', data: { v: 2 }, webhook, receivedAt: at3 },
      { status: 'invalid', error: 'data.comment: required' },
      { retentionDays: 7, now: at0 },
    );
    expect(stored).to.deep.equal({
      key,
      event: 'comment.didCreate',
      data: { v: 2 },
      webhook,
      receivedAt: at3,
      storedAt: at0,
      expiresAt: new Date(at3.getTime() + 7 * DAY_MS),
      status: 'invalid',
      error: 'data.comment: required',
    });
    expect(await storage.events.get(key)).to.deep.equal(stored);
    expect((await storage.events.list({ webhook }, 10)).items).to.deep.equal([stored]);
    expect(await storage.events.count({ webhook })).to.equal(1);
    // Counted in its minute, and its first mark is the first (the live tail announces it).
    expect(await storage.events.perMinute(at3, at2)).to.deep.equal([
      { minute: at3, counts: { 'comment.didCreate': 1 } },
    ]);
    expect(await storage.events.markApplied(stored, at0)).to.equal(true);
    expect((await storage.events.lagPerMinute(at3, at2)).map((m) => m.count)).to.deep.equal([1]);
    // Stored anew once: a further redelivery gets it as stored, and counts nothing more.
    expect(
      await storage.events.store(
        { key, event: 'post.didCreate', data: { v: 3 }, webhook, receivedAt: at1 },
        { status: 'applied' },
        { retentionDays: 7, now: at0 },
      ),
    ).to.deep.equal({ ...stored, appliedAt: at0 });
    expect(await storage.events.markApplied(stored, at0)).to.equal(false);
    expect((await storage.events.perMinute(at3, at0)).map((m) => m.counts)).to.deep.equal([
      { 'comment.didCreate': 1 },
    ]);
  },
);

// JSON allows U+0000 anywhere, in a key too; BSON refuses it in a key, PostgreSQL's text and
// jsonb anywhere (and so FerretDB). The acknowledged event must still be stored, never fail its
// job on every retry: each U+0000 is kept as U+FFFD, the replacement character, on every adapter.
conformanceCase(
  'events: a payload holding U+0000, in a key or a string, is stored with U+FFFD in its place',
  async ({ storage, id }) => {
    const key = id('nul');
    const stored = await storage.events.store(
      {
        key,
        event: 'follow.didCreate',
        data: { 'te\u0000xt': 'a\u0000b', list: ['\u0000', { 'k\u0000': { 'in\u0000ner': 1 } }] },
        webhook: id('wh'),
        receivedAt: received(5),
      },
      { status: 'invalid', error: 'bad \u0000', userId: id('u-\u0000') },
      { retentionDays: 7, now: received(1) },
    );
    const data = { 'te\uFFFDxt': 'a\uFFFDb', list: ['\uFFFD', { 'k\uFFFD': { 'in\uFFFDner': 1 } }] };
    expect(stored).to.deep.include({ key, data, error: 'bad \uFFFD', userId: id('u-\uFFFD') });
    expect(await storage.events.get(key)).to.deep.equal(stored);
  },
);

// An event's ids are at most 128 characters (tray-service/domain/event-id.ts): a longer acting
// user or community id, which no valid event names, would be more than an index entry of
// PostgreSQL (or FerretDB) may hold, and the store would fail on every retry. It is left out,
// and the event is stored.
conformanceCase(
  'events: an acting user or community id longer than an event’s ids may be is left out, and the event stored',
  async ({ storage, id }) => {
    const tooLong = randomBytes(2_500).toString('hex');
    const activity = aPost(id('u-ana'), { id: id('p'), at: received(5).getTime(), communityId: tooLong });
    const key = id('long-ids');
    const stored = await storage.events.store(
      { key, event: 'post.didCreate', data: {}, webhook: id('wh'), receivedAt: received(5) },
      {
        status: 'applied',
        userId: tooLong,
        communityId: tooLong,
        communityPost: { communityId: tooLong, at: activity.at, activity },
      },
      { retentionDays: 7, now: received(1) },
    );
    expect(stored).to.deep.include({ key, status: 'applied' });
    expect(stored).to.not.have.any.keys('userId', 'communityId');
    expect(await storage.events.get(key)).to.deep.equal(stored);

    const longest = { userId: id('u').padEnd(128, 'u'), communityId: id('c').padEnd(128, 'c') };
    const kept = await storage.events.store(
      {
        key: id('longest-ids'),
        event: 'post.didCreate',
        data: {},
        webhook: id('wh'),
        receivedAt: received(5),
      },
      { status: 'applied', ...longest },
      { retentionDays: 7, now: received(1) },
    );
    expect(kept).to.deep.include(longest);
  },
);

// The event schemas allow extra fields, and JSON allows any key: a key starting with `$` or
// holding a `.` is a field name MongoDB-compatible servers refuse (FerretDB in every document). The
// acknowledged event must still be stored, read back exactly as received (every reader: list, get,
// stream) and applied, a late join included, never fail its job on every retry.
conformanceCase(
  'events: a payload with keys starting with $ or holding a dot is stored, read back exactly and applied',
  async (context) => {
    const { storage, id } = context;
    const communityId = id('c-keys');
    const post = aPost(id('u-ben'), { id: id('p-keys'), at: at(5), communityId });
    const { event, data: platform } = postEvent(post);
    const data = {
      ...platform,
      post: {
        ...platform.post,
        metadata: { $type: 'x', 'a.b': 'y', $: { '.': ['$', { $in: [{ 'c.d.': 1 }] }] } },
      },
      // Keys that already look escaped, or hold what an escape could use, come back as they were.
      '%24type': '%2E',
      '%': { '%25': '%', 'a%2Eb': 1, '$%.': 2 },
      'x.$': [],
      '': { 'ü.ß': '\uFFFD' },
    };
    const key = id('dollar-keys');
    const webhook = id('wh');
    const stored = await storage.events.store(
      { key, event, data, webhook, receivedAt: received(5) },
      { status: 'applied', communityId, communityPost: { communityId, at: post.at, activity: post } },
      { retentionDays: 7, now: received(1) },
    );
    expect(stored.data).to.deep.equal(data);
    expect((await storage.events.get(key))?.data).to.deep.equal(data);
    expect((await storage.events.list({ webhook }, 10)).items.map((one) => one.data)).to.deep.equal([data]);
    const streamed: StoredEvent[] = [];
    for await (const one of storage.events.stream({ webhook })) streamed.push(one);
    expect(streamed.map((one) => one.data)).to.deep.equal([data]);
    // A redelivery gets it as first stored.
    expect(
      (
        await storage.events.store(
          { key, event, data, webhook, receivedAt: received(5) },
          { status: 'applied' },
          { retentionDays: 7, now: received(0) },
        )
      ).data,
    ).to.deep.equal(data);

    // Applied: marked once, and its post reaches a member whose join is processed after it.
    expect(await storage.events.markApplied(stored, received(1))).to.equal(true);
    expect(await storage.events.get(key)).to.deep.include({ appliedAt: received(1), data });
    await storage.writes.fanOutPosts(communityId, [post], context.write(NOW));
    await storage.writes.applyMemberships(
      [{ communityId, userId: id('u-ana'), active: true, at: at(0) }],
      context.write(NOW + 1),
    );
    const { records } = await storage.records.pageAfter(id('u-ana'), undefined, 10, NOW + 1);
    expect(records.map((record) => [record.verb, record.lastActionId])).to.deep.equal([
      ['post', id('p-keys')],
    ]);
  },
);

// JSON allows an array inside an array and a number too large for a double (1e400, which the
// worker's JSON.parse reads as Infinity); FerretDB refuses both in a document, so such an event
// failed its job on every attempt there and reached no tray. A number JSON cannot hold is stored as
// null (what JSON.stringify writes, and so what PostgreSQL kept); the arrays come back as sent.
conformanceCase(
  'events: a payload with arrays inside arrays and a number JSON cannot hold is stored and read back, the number as null',
  async (context) => {
    const { storage, id } = context;
    const communityId = id('c-arrays');
    const post = aPost(id('u-ben'), { id: id('p-arrays'), at: at(5), communityId });
    const { event, data: platform } = postEvent(post);
    const sent = {
      ...platform,
      geo: [
        [1, 2],
        [3, [4, []]],
      ],
      tall: Number.POSITIVE_INFINITY,
      deep: Number.NEGATIVE_INFINITY,
      // A key that looks like what an escape could use comes back as it was.
      odd: [[], { '%[]': [1] }, [{ 'a.b': [[5]] }]],
    };
    const kept = { ...sent, tall: null, deep: null };
    const key = id('nested-arrays');
    const webhook = id('wh');
    const stored = await storage.events.store(
      { key, event, data: sent, webhook, receivedAt: received(5) },
      { status: 'applied', communityId, communityPost: { communityId, at: post.at, activity: post } },
      { retentionDays: 7, now: received(1) },
    );
    // What store answers is the payload as handed over, but for what the engine had to change:
    // the worker hands every payload through storableJson first (so no Infinity reaches it there),
    // and PostgreSQL answers the row it sent without reading it back.
    expect({ ...stored.data, tall: null, deep: null }).to.deep.equal(kept);
    expect((await storage.events.get(key))?.data).to.deep.equal(kept);
    expect((await storage.events.list({ webhook }, 10)).items.map((one) => one.data)).to.deep.equal([kept]);
    const streamed: StoredEvent[] = [];
    for await (const one of storage.events.stream({ webhook })) streamed.push(one);
    expect(streamed.map((one) => one.data)).to.deep.equal([kept]);
    expect(await storage.events.markApplied(stored, received(1))).to.equal(true);
  },
);

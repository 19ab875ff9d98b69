import { expect } from 'chai';
import request from 'supertest';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { startSnoozeWakeLoop } from '../../../tray-service/worker/snooze-wake-loop.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { bearer } from '../api/support/api-harness.ts';
import { createOpenApiValidator } from '../api/support/openapi-validator.ts';
import { createTrayOpenApiDocument } from '../../../tray-service/http/api-schema/tray-api-schema.ts';
import { streamEventComponent, streamEvents } from '../../../tray-service/http/api-schema/stream-schemas.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named, openSse, type SseEvent, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';
const validator = createOpenApiValidator(createTrayOpenApiDocument());
/** A record back in the inbox as new to its user: a snooze that ended, or new activity. */
const BACK_IN_INBOX = { hasRead: false, isSeen: false, archivedAt: null, snoozedUntil: null };

/** Fails unless the event is one the schema's streamEvents declares, with the data declared for it. */
function expectDeclared(event: SseEvent): void {
  expect(Object.keys(streamEvents)).to.include(event.event);
  const ref = `#/components/schemas/${streamEventComponent(event.event)}`;
  validator.expectValid(JSON.parse(event.data), ref, `event ${event.event}`);
}

describe('inbox events on the live stream (docs/live-tray.md)', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 2 });
  const user = 'u-inbox-live';
  let keys: string[] = [];
  let stream: SseStream;

  before(async () => {
    const now = Date.now();
    keys = await seedRecords(tray.worker.storage, [
      { userId: user, targetId: 'p-a', lastUpdate: now - 60_000 },
      { userId: user, targetId: 'p-b', lastUpdate: now - 120_000 },
    ]);
    stream = await openSse(`${tray.instance(0).base}${STREAM}`, { Authorization: await bearer(user) });
  });
  after(() => stream.close());

  /** A mark through the other instance; the events the stream got for it, up to its counts. */
  async function mark(kind: string, body: object, expected: string) {
    const from = stream.events.length;
    const res = await request(tray.instance(1).base)
      .post(`/notifications/v3/records/${kind}`)
      .set('Authorization', await bearer(user))
      .send(body);
    expect(res.body).to.deep.equal({ data: { updated: 1 } });
    const event = await stream.next(named(expected), { from });
    expectDeclared(event);
    return event;
  }
  const counts = async (from: number, unread: number, unseen: number) => {
    const event = await stream.next(
      (e) =>
        e.event === 'unread' &&
        JSON.stringify(dataOf(e)) === JSON.stringify({ totalUnreadCount: unread, totalUnseenCount: unseen }),
      { from },
    );
    expectDeclared(event);
  };

  it('opens with both counts', async () => {
    const first = await stream.next(named('unread'));
    expect(dataOf(first)).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 2 });
    expectDeclared(first);
  });

  it('announces seen {ids}, then the unseen count alone changed', async () => {
    const from = stream.events.length;
    const seen = await mark('seen', { ids: [keys[0]] }, 'seen');
    expect(dataOf(seen)).to.deep.equal({ ids: [keys[0]] });
    await counts(from, 2, 1);
  });

  it('announces archived {ids} and the counts without it; unarchive sends the record back with its state', async () => {
    const from = stream.events.length;
    expect(dataOf(await mark('archive', { ids: [keys[0]] }, 'archived'))).to.deep.equal({ ids: [keys[0]] });
    await counts(from, 1, 1);
    const back = stream.events.length;
    const record = dataOf<NotificationRecord>(await mark('unarchive', { ids: [keys[0]] }, 'record'));
    expect(record).to.include({ v_tarid_uid: keys[0], isSeen: true, archivedAt: null, snoozedUntil: null });
    await counts(back, 2, 1);
  });

  it('announces snoozed {ids, until}; unsnooze sends the record back', async () => {
    const until = Date.now() + 3_600_000;
    const from = stream.events.length;
    expect(dataOf(await mark('snooze', { ids: [keys[1]], until }, 'snoozed'))).to.deep.equal({
      ids: [keys[1]],
      until,
    });
    await counts(from, 1, 0);
    const record = dataOf<NotificationRecord>(await mark('unsnooze', { ids: [keys[1]] }, 'record'));
    expect(record).to.include({ v_tarid_uid: keys[1], snoozedUntil: null, hasRead: false, isSeen: false });
  });

  it('sends a record whose snooze ended, unread and unseen, within 1 s of its until', async () => {
    const marked = stream.events.length;
    const until = Date.now() + 2_000;
    await mark('snooze', { ids: [keys[0]], until }, 'snoozed');
    await mark('seen', { all: true }, 'seen');
    await counts(marked, 1, 0);
    const from = stream.events.length;
    // The wake-up is the loop's: timed from its start when the marks took past until.
    const loopStartedAt = Date.now();
    const loop = startSnoozeWakeLoop({
      storage: tray.worker.storage,
      changes: tray.changes,
      logger: createLogger({ name: 'test', level: 'silent' }),
      intervalMs: 250,
    });
    try {
      const event = await stream.next(
        (e) => e.event === 'record' && dataOf<NotificationRecord>(e).v_tarid_uid === keys[0],
        {
          from,
          timeoutMs: 10_000,
        },
      );
      const lateBy = Date.now() - Math.max(until, loopStartedAt);
      expect(lateBy, 'ms after until').to.be.at.most(1_000);
      expectDeclared(event);
      expect(dataOf(event)).to.include(BACK_IN_INBOX);
      await counts(from, 2, 1);
    } finally {
      await loop.stop();
    }
  });

  describe('every record event carries the inbox state, as v3 history does', () => {
    const owner = 'u-inbox-state';
    const id = `comment_p-st_${owner}`;
    const commentBy = (author: string, at: number) =>
      commentEvent({
        postId: 'p-st',
        postOwner: owner,
        author,
        commentId: `cm-st-${at}`,
        createdAt: minute(at),
      });
    const open: SseStream[] = [];
    after(() => {
      for (const one of open) one.close();
    });
    async function openStream(headers: Record<string, string> = {}) {
      const opened = await openSse(`${tray.instance(0).base}${STREAM}`, {
        Authorization: await bearer(owner),
        ...headers,
      });
      open.push(opened);
      return opened;
    }
    /** The record as v3 history's `view` returns it. */
    async function historyRecord(view: string): Promise<NotificationRecord | undefined> {
      const page = await request(tray.instance(1).base)
        .get(`/notifications/v3/history?view=${view}`)
        .set('Authorization', await bearer(owner));
      return (page.body.data as NotificationRecord[]).find((record) => record.v_tarid_uid === id);
    }
    const recordEvent = (event: SseEvent) =>
      event.event === 'record' && dataOf<NotificationRecord>(event).v_tarid_uid === id;

    it("a reconnect's catch-up sends a record archived while away with its archivedAt", async () => {
      await tray.worker.deliver(commentBy('u-cid', 30));
      const first = await openStream();
      const unread = await first.next(named('unread'));
      first.close();
      const archived = await request(tray.instance(1).base)
        .post('/notifications/v3/records/archive')
        .set('Authorization', await bearer(owner))
        .send({ ids: [id] });
      expect(archived.body).to.deep.equal({ data: { updated: 1 } });

      const again = await openStream({ 'Last-Event-ID': unread.id ?? '' });
      const caught = await again.next(recordEvent);
      expectDeclared(caught);
      const expected = await historyRecord('archived');
      expect(expected?.archivedAt).to.be.a('number');
      // Not a plain record, which a client would take for one back in the inbox.
      expect(dataOf(caught)).to.deep.equal(expected);
      again.close();
    });

    it('a new comment on an archived, seen record arrives back in the inbox: archivedAt null, unseen, unread', async () => {
      const seen = await request(tray.instance(1).base)
        .post('/notifications/v3/records/seen')
        .set('Authorization', await bearer(owner))
        .send({ ids: [id] });
      expect(seen.body).to.deep.equal({ data: { updated: 1 } });
      const live = await openStream();
      await live.next(named('unread'));
      await tray.worker.deliver(commentBy('u-dee', 31));
      const event = await live.next((e) => recordEvent(e) && dataOf<NotificationRecord>(e).actorsCount === 2);
      expectDeclared(event);
      expect(dataOf(event)).to.include(BACK_IN_INBOX);
      expect(dataOf(event)).to.deep.equal(await historyRecord('inbox'));
    });
  });
});

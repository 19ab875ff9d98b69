import { expect } from 'chai';
import request from 'supertest';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { markRead } from '../../../tray-service/use-cases/mark-read.ts';
import { ANA, seedActivities } from '../../support/seed-tray.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, type SseEvent, type SseStream } from './support/sse-client.ts';

const BOB = { userId: 'bob', name: 'Bob', imageUrl: 'https://img.example/bob.png' };

/** What a client shows after applying these events, as the demo page does: each record's actors and read flag. */
function shownBy(events: readonly SseEvent[]): Map<string, { actors: string; hasRead: boolean }> {
  const shown = new Map<string, { actors: string; hasRead: boolean }>();
  for (const event of events) {
    if (event.event === 'record') {
      const record = dataOf<NotificationRecord>(event);
      const actors = record.actors.map((actor) => actor.name).join(',');
      shown.set(record.v_tarid_uid, { actors, hasRead: record.hasRead });
    }
    if (event.event === 'read') {
      for (const id of dataOf<{ ids: string[] }>(event).ids) {
        const record = shown.get(id);
        if (record) record.hasRead = true;
      }
    }
  }
  return shown;
}

// A record's announcements travel separately: the worker's after its commit, a mark's after the
// API's. One that arrives after a later state of the same record was announced must neither hide
// the record from the stream nor leave the client with an earlier state than the tray's.
describe('a mark announced before the record state it changed', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  /** The worker's write of one record, committed; its announcement is the test's to send. */
  const write = async (userId: string, targetId: string, actors = [ANA], now = Date.now()) => {
    let written: InboxRecord[] = [];
    await tray.worker.storage.writes.applyPersonal(
      seedActivities({ userId, targetId, actors, lastUpdate: now }),
      {
        now,
        retentionDays: 90,
        onWritten: async (records) => {
          written = [...records];
        },
      },
    );
    return written;
  };
  const stream = tray.stream;
  let markers = 0;
  /**
   * What the client shows for `key` once everything announced so far reached it: a marker record of
   * the same user is written and announced last, and a user's changes reach a stream in order, so
   * when the marker is shown every earlier announcement (a late one above all) has been handled.
   * `before`: the events of an earlier stream of the user.
   */
  const settle = async (on: SseStream, user: string, key: string, before: readonly SseEvent[] = []) => {
    const marker = await write(user, `p-marker-${(markers += 1)}`);
    await tray.changes.recordsWritten(marker);
    const markerKey = marker[0]?.key ?? '';
    await on.next(() => shownBy(on.events).has(markerKey), { timeoutMs: 5_000 });
    return shownBy([...before, ...on.events]).get(key);
  };

  /** Another device marks all read: the stream hears of it (a `read`, or the record it brings). */
  const markAllReadElsewhere = async (on: SseStream, user: string) => {
    await request(tray.instance(0).base)
      .get('/notifications/v3/mark-all-as-read')
      .set('Authorization', await bearer(user))
      .expect(200);
    await on.next((event) => event.event === 'read' || event.event === 'record');
  };

  it('a new record marked read (mark-all-as-read) before its own announcement arrives: shown, read', async () => {
    const user = 'u-mark-before-new';
    const live = await stream(user);
    const written = await write(user, 'p-new');
    const key = written[0]?.key ?? '';
    // Another device marks all read; its `read` goes out before the worker's announcement.
    await markAllReadElsewhere(live, user);
    await tray.changes.recordsWritten(written);
    const expected = { actors: 'Ana', hasRead: true };
    expect(await settle(live, user, key), 'live').to.deep.equal(expected);

    live.close();
    const again = await stream(user, { 'Last-Event-ID': lastId(live.events) });
    expect(await settle(again, user, key, live.events), 'after a reconnect').to.deep.equal(expected);
  });

  it('a record stamped moments before the stream opened, landing after its client read history, marked read before its announcement: shown, read', async () => {
    const user = 'u-mark-before-opening';
    // Stamped a second before the opening, committed after the client's read of history (here: the
    // client read nothing), announced late: only the stream can bring it.
    const written = await write(user, 'p-early', [ANA], Date.now() - 1_000);
    const key = written[0]?.key ?? '';
    const live = await stream(user);
    await markAllReadElsewhere(live, user);
    await tray.changes.recordsWritten(written);
    expect(await settle(live, user, key)).to.deep.equal({ actors: 'Ana', hasRead: true });
  });

  it('a record the stream shows, changed by the worker and marked read, the mark announced first: the new state, read', async () => {
    const user = 'u-mark-before-update';
    const live = await stream(user);
    const first = await write(user, 'p-shown');
    const key = first[0]?.key ?? '';
    await tray.changes.recordsWritten(first);
    await live.next(named('record'));
    // Bob comments: the worker's write commits; the user marks the record read on another device,
    // and that mark is announced before the worker's write.
    const second = await write(user, 'p-shown', [ANA, BOB]);
    await markRead(tray.worker.storage, tray.changes, {
      userId: user,
      verb: 'comment',
      targetId: 'p-shown',
      now: Date.now(),
    });
    await tray.changes.recordsWritten(second);
    const expected = { actors: 'Ana,Bob', hasRead: true };
    expect(await settle(live, user, key)).to.deep.equal(expected);
  });

  it('a read mark stamped before a concurrent write of the record but landing after it: read, live and on reconnect', async () => {
    const user = 'u-mark-stale-stamp';
    const old = await write(user, 'p-s', [ANA], Date.now() - 60_000);
    const key = old[0]?.key ?? '';
    const live = await stream(user);
    // v2/read's handler reads its clock ...
    const markedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // ... a worker's write of the same record is stamped later and commits first ...
    const written = await write(user, 'p-s', [ANA, BOB]);
    await tray.changes.recordsWritten(written);
    await live.next(named('record'));
    // ... then the API's update, which waited for the row, lands with the clock it read.
    await markRead(tray.worker.storage, tray.changes, {
      userId: user,
      verb: 'comment',
      targetId: 'p-s',
      now: markedAt,
    });
    const expected = { actors: 'Ana,Bob', hasRead: true };
    expect(await settle(live, user, key), 'live').to.deep.equal(expected);

    const [stored] = await tray.worker.storage.records.changedSince(user, 0, Date.now());
    expect(stored?.changedAt, 'the mark is a later state than the write').to.be.above(
      written[0]?.changedAt ?? 0,
    );
    // A stream that reconnects from before the mark gets it.
    const beforeMark = live.events.slice(0, live.events.findLastIndex(named('record')) + 1);
    live.close();
    const again = await stream(user, { 'Last-Event-ID': lastId(beforeMark) });
    expect(await settle(again, user, key, beforeMark), 'after a reconnect').to.deep.equal(expected);
  });
});

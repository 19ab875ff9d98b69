import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { deleteAll } from '../../../tray-service/use-cases/delete-all.ts';
import type { TrayChanges } from '../../../tray-service/use-cases/tray-changes.ts';
import { SETTLE_MS } from '../../../tray-service/live/stream-cursor.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named, openSse, type SseEvent } from './support/sse-client.ts';

/** The records a client shows after applying these events, as the demo page does. */
function shownBy(events: readonly SseEvent[]): string[] {
  const shown = new Map<string, string>();
  for (const event of events) {
    if (event.event === 'cleared') shown.clear();
    if (event.event === 'record') {
      const record = dataOf<NotificationRecord>(event);
      shown.set(record.v_tarid_uid, record.targetId);
    }
    if (event.event === 'removed') for (const id of dataOf<{ ids: string[] }>(event).ids) shown.delete(id);
  }
  return [...shown.values()];
}

// A worker's write that lands after delete-all's DELETE and before its `cleared` is announced
// reaches the stream first; the client then empties its list on `cleared`, and must still end
// with that record, which the tray holds.
describe('a record written while a delete-all is under way', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-clear-race';

  it('is shown by the stream after its `cleared`, live and on reconnect', async () => {
    const storage = tray.worker.storage;
    const base = tray.instance(0).base;
    const write = (targetId: string, at: number) =>
      storage.writes.applyPersonal(seedActivities({ userId: user, targetId, lastUpdate: at }), {
        now: at,
        retentionDays: 90,
        onWritten: (records) => tray.changes.recordsWritten(records),
      });
    await write('p-old', Date.now() - 60_000);
    const stream = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(user) });
    const opened = (await stream.next(named('unread'))).id;
    // v3/delete-all as the route runs it; the worker's job commits (and announces) between the
    // DELETE and the clear's time being stored and announced.
    const clears: TrayStorage['clears'] = {
      ...storage.clears,
      record: async (userId, at) => {
        await write('p-new', Date.now());
        return storage.clears.record(userId, at);
      },
    };
    await deleteAll({ records: storage.records, clears }, tray.instance(0).live.publisher, user, Date.now());
    await stream.next(named('cleared'), { from: 0 });
    // The race took place: p-new reached the stream before the clear that would hide it.
    expect(
      shownBy(stream.events.slice(0, stream.events.findIndex(named('cleared')))),
      'before the clear',
    ).to.include('p-new');
    await stream
      .next((event) => event.event === 'record', {
        from: stream.events.findIndex(named('cleared')) + 1,
        timeoutMs: 2_000,
      })
      .catch(() => undefined);
    stream.close();
    expect(shownBy(stream.events), 'live').to.deep.equal(['p-new']);

    // A stream that was away: it had p-new before the clear, and resumes from there.
    const beforeClear = stream.events.slice(0, stream.events.findIndex(named('cleared')));
    const lastId = [...beforeClear].reverse().find((event) => event.id !== undefined)?.id ?? opened ?? '';
    const again = await openSse(`${base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
      'Last-Event-ID': lastId,
    });
    await again.next(named('cleared'));
    await again
      .next((event) => event.event === 'record', {
        from: again.events.findIndex(named('cleared')) + 1,
        timeoutMs: 2_000,
      })
      .catch(() => undefined);
    again.close();
    expect(shownBy([...beforeClear, ...again.events]), 'on reconnect').to.deep.equal(['p-new']);
  });
});

// The other order: a record committed before delete-all whose announcement comes after the
// `cleared` (a fan-out announced a batch at a time, a late wake-up). The stream sent it after the
// clear, and the client showed a record the tray no longer holds, until a reload.
describe('a record deleted by a delete-all whose announcement comes after it', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-clear-late';

  it('is not shown by the stream', async () => {
    const storage = tray.worker.storage;
    const stream = await openSse(`${tray.instance(0).base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
    });
    await stream.next(named('unread'));
    const clearAnnounced = Promise.withResolvers<undefined>();
    let announced: Promise<unknown> = Promise.resolve();
    let written = 0;
    const at = Date.now();
    await storage.writes.applyPersonal(seedActivities({ userId: user, targetId: 'p-late', lastUpdate: at }), {
      now: at,
      retentionDays: 90,
      onWritten: async (records) => {
        written += records.length;
        announced = clearAnnounced.promise.then(() => tray.changes.recordsWritten(records));
      },
    });
    expect(written, 'records whose announcement is held back').to.equal(1);
    await deleteAll(
      { records: storage.records, clears: storage.clears },
      tray.instance(0).live.publisher,
      user,
      Date.now(),
    );
    await stream.next(named('cleared'), { from: 0 });
    clearAnnounced.resolve(undefined);
    await announced;
    const after = stream.events.findIndex(named('cleared')) + 1;
    await stream
      .next((event) => event.event === 'record', { from: after, timeoutMs: 2_000 })
      .catch(() => undefined);
    stream.close();
    expect(shownBy(stream.events)).to.deep.equal([]);
  });

  // Written while the delete-all ran (stored after its DELETE), announced after the catch-up of
  // its `cleared` had sent it: sent once, not again for its own late announcement.
  it('sends a record written during it once after its `cleared`, however late its announcement', async () => {
    const storage = tray.worker.storage;
    const other = `${user}-during`;
    const stream = await openSse(`${tray.instance(0).base}/notifications/v3/stream`, {
      Authorization: await bearer(other),
    });
    await stream.next(named('unread'));
    const release = Promise.withResolvers<undefined>();
    let announced: Promise<unknown> = Promise.resolve();
    let written = 0;
    const clears: TrayStorage['clears'] = {
      ...storage.clears,
      record: async (userId, at) => {
        const now = Date.now();
        await storage.writes.applyPersonal(
          seedActivities({ userId: other, targetId: 'p-during', lastUpdate: now }),
          {
            now,
            retentionDays: 90,
            onWritten: async (records) => {
              written += records.length;
              announced = release.promise.then(() => tray.changes.recordsWritten(records));
            },
          },
        );
        return storage.clears.record(userId, at);
      },
    };
    await deleteAll({ records: storage.records, clears }, tray.instance(0).live.publisher, other, Date.now());
    expect(written, 'records whose announcement is held back').to.equal(1);
    await stream.next(named('cleared'), { from: 0 });
    const after = stream.events.findIndex(named('cleared')) + 1;
    const during = (event: SseEvent) =>
      event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-during';
    await stream.next(during, { from: after });
    release.resolve(undefined);
    await announced;
    await stream
      .next(during, { from: stream.events.findIndex(during) + 1, timeoutMs: 1_500 })
      .catch(() => undefined);
    stream.close();
    expect(stream.events.slice(after).filter(during)).to.have.lengthOf(1);
    expect(shownBy(stream.events)).to.deep.equal(['p-during']);
  });
});

// A live `cleared` went through the reconnect rule (a clear inside the id's window): a stream
// whose id had moved more than the settle window past the clear (a record stamped later reached
// it first: a long catch-up's later page, a writer whose clock runs ahead) was never told, and its
// client kept every record the delete removed.
describe('a delete-all announced to a stream whose id moved past its time', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-clear-behind';

  it('is told `cleared`', async () => {
    const storage = tray.worker.storage;
    const stream = await openSse(`${tray.instance(0).base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
    });
    await stream.next(named('unread'));
    const ahead = Date.now() + 7_000;
    await storage.writes.applyPersonal(
      seedActivities({ userId: user, targetId: 'p-ahead', lastUpdate: ahead }),
      {
        now: ahead,
        retentionDays: 90,
        onWritten: (records) => tray.changes.recordsWritten(records),
      },
    );
    await stream.next(named('record'));
    await deleteAll(
      { records: storage.records, clears: storage.clears },
      tray.instance(0).live.publisher,
      user,
      Date.now(),
    );
    await stream.next(named('cleared'), { from: 0, timeoutMs: 3_000 }).catch(() => undefined);
    stream.close();
    expect(shownBy(stream.events)).to.deep.equal([]);
  });

  // The clear is owed to the streams open when it was made; one opened well after it (its client
  // read its list after the delete) would drop that list for nothing when the announcement is late.
  it('is not told to a stream opened more than the settle window after it', async function () {
    this.timeout(30_000);
    const storage = tray.worker.storage;
    const other = `${user}-fresh`;
    const publisher = tray.instance(0).live.publisher;
    const go = Promise.withResolvers<undefined>();
    const late: Pick<TrayChanges, 'cleared'> = {
      cleared: async (userId, at) => {
        await go.promise;
        return publisher.cleared(userId, at);
      },
    };
    const deleting = deleteAll({ records: storage.records, clears: storage.clears }, late, other, Date.now());
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 1_000));
    const stream = await openSse(`${tray.instance(0).base}/notifications/v3/stream`, {
      Authorization: await bearer(other),
    });
    await stream.next(named('unread'));
    go.resolve(undefined);
    await deleting;
    await stream.next(named('cleared'), { timeoutMs: 1_500 }).catch(() => undefined);
    stream.close();
    expect(stream.events.filter(named('cleared'))).to.deep.equal([]);
  });
});

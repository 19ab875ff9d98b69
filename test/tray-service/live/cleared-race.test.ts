import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { deleteAll } from '../../../tray-service/use-cases/delete-all.ts';
import type { TrayChanges } from '../../../tray-service/use-cases/tray-changes.ts';
import { SETTLE_MS } from '../../../tray-service/domain/settle-window.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray, type LiveHarness } from './support/live-harness.ts';
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

type OnWritten = (records: readonly InboxRecord[]) => Promise<void>;

/** The user's stream on the tray's first instance, once its opening `unread` has come. */
async function openedStream(tray: LiveHarness, userId: string) {
  const stream = await openSse(`${tray.instance(0).base}/notifications/v3/stream`, {
    Authorization: await bearer(userId),
  });
  await stream.next(named('unread'));
  return stream;
}

/** A record written as the worker writes one, stamped `at`, announced by `onWritten`. */
function writeRecord(tray: LiveHarness, userId: string, targetId: string, at: number, onWritten: OnWritten) {
  return tray.worker.storage.writes.applyPersonal(seedActivities({ userId, targetId, lastUpdate: at }), {
    now: at,
    retentionDays: 90,
    onWritten,
  });
}

/** An announcement held back until `release()`: how many records it holds, and once it went out. */
function heldAnnouncement(tray: LiveHarness) {
  const gate = Promise.withResolvers<undefined>();
  const held = {
    written: 0,
    announced: Promise.resolve() as Promise<unknown>,
    release: () => gate.resolve(undefined),
    onWritten: (async (records) => {
      held.written += records.length;
      held.announced = gate.promise.then(() => tray.changes.recordsWritten(records));
    }) satisfies OnWritten,
  };
  return held;
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
    const stream = await openedStream(tray, user);
    const held = heldAnnouncement(tray);
    await writeRecord(tray, user, 'p-late', Date.now(), held.onWritten);
    expect(held.written, 'records whose announcement is held back').to.equal(1);
    await deleteAll(
      { records: storage.records, clears: storage.clears },
      tray.instance(0).live.publisher,
      user,
      Date.now(),
    );
    await stream.next(named('cleared'), { from: 0 });
    held.release();
    await held.announced;
    const after = stream.events.findIndex(named('cleared')) + 1;
    await stream
      .next((event) => event.event === 'record', { from: after, timeoutMs: 2_000 })
      .catch(() => undefined);
    stream.close();
    expect(shownBy(stream.events)).to.deep.equal([]);
  });

  // Its client read its list after the delete, without the record; the late announcement must
  // not bring it back, on a stream that was never told `cleared`.
  it('is not shown by a stream opened after the delete-all', async () => {
    const storage = tray.worker.storage;
    const other = `${user}-opened-after`;
    const held = heldAnnouncement(tray);
    await writeRecord(tray, other, 'p-late', Date.now(), held.onWritten);
    await deleteAll(
      { records: storage.records, clears: storage.clears },
      tray.instance(0).live.publisher,
      other,
      Date.now(),
    );
    const stream = await openedStream(tray, other);
    await stream.next(named('cleared'), { from: 0, timeoutMs: 1_000 }).catch(() => undefined);
    held.release();
    await held.announced;
    await writeRecord(tray, other, 'p-next', Date.now(), (records) => tray.changes.recordsWritten(records));
    await stream.next(
      (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-next',
    );
    stream.close();
    expect(shownBy(stream.events)).to.deep.equal(['p-next']);
  });

  // Written while the delete-all ran (stored after its DELETE), announced after the catch-up of
  // its `cleared` had sent it: sent once, not again for its own late announcement.
  it('sends a record written during it once after its `cleared`, however late its announcement', async () => {
    const storage = tray.worker.storage;
    const other = `${user}-during`;
    const stream = await openedStream(tray, other);
    const held = heldAnnouncement(tray);
    const clears: TrayStorage['clears'] = {
      ...storage.clears,
      record: async (userId, at) => {
        await writeRecord(tray, other, 'p-during', Date.now(), held.onWritten);
        return storage.clears.record(userId, at);
      },
    };
    await deleteAll({ records: storage.records, clears }, tray.instance(0).live.publisher, other, Date.now());
    expect(held.written, 'records whose announcement is held back').to.equal(1);
    await stream.next(named('cleared'), { from: 0 });
    const after = stream.events.findIndex(named('cleared')) + 1;
    const during = (event: SseEvent) =>
      event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-during';
    await stream.next(during, { from: after });
    held.release();
    await held.announced;
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
    const stream = await openedStream(tray, user);
    await writeRecord(tray, user, 'p-ahead', Date.now() + 7_000, (records) =>
      tray.changes.recordsWritten(records),
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
    const stream = await openedStream(tray, other);
    go.resolve(undefined);
    await deleting;
    await stream.next(named('cleared'), { timeoutMs: 1_500 }).catch(() => undefined);
    stream.close();
    expect(stream.events.filter(named('cleared'))).to.deep.equal([]);
  });
});

// delete-all removed the records and then failed to store the clear's time (a dropped connection):
// its `cleared` was still announced, but the stream read the clear's time from storage only,
// found none, and sent nothing; the client kept showing records the tray no longer holds.
describe('a delete-all whose clear time could not be stored', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-clear-unstored';

  it('is still told to the open stream, from its announcement', async () => {
    const storage = tray.worker.storage;
    await writeRecord(tray, user, 'p-gone', Date.now() - 60_000, (records) =>
      tray.changes.recordsWritten(records),
    );
    const stream = await openedStream(tray, user);
    const clears: TrayStorage['clears'] = {
      ...storage.clears,
      record: async () => {
        throw new Error('connection terminated');
      },
    };
    const failed = await deleteAll(
      { records: storage.records, clears },
      tray.instance(0).live.publisher,
      user,
      Date.now(),
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed, 'the call fails, to be tried again').to.be.instanceOf(Error);
    await stream.next(named('cleared'), { from: 0, timeoutMs: 3_000 }).catch(() => undefined);
    stream.close();
    expect(stream.events.filter(named('cleared')), 'cleared events').to.have.lengthOf(1);
    expect(shownBy(stream.events)).to.deep.equal([]);
  });
});

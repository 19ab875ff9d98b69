import { expect } from 'chai';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { aComment } from '../../support/activity-builder.ts';
import { commentDeleteEvent } from '../worker/event-builder.ts';
import { commentOn, historyIds as historyIdsAt, listAfter } from './support/client-list.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, type SseStream } from './support/sse-client.ts';

/**
 * A record removed (its last action deleted) and stored again (new activity on it) at nearly the
 * same moment by two workers: the two announcements arrive in either order, and the new state's
 * changedAt, stamped before its write waited for locks, may be older than the state the stream
 * had delivered. Whatever the order and the times, a stream's client ends with what storage holds
 * (docs/live-tray.md#event-ids-and-resuming). Each test plays one interleaving by announcing
 * through the publisher what the worker would, and fails on a hub that trusts the order or times.
 */

describe('live streams: a removal and a new state of the same record, as storage has them', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });

  const historyIds = (user: string) => historyIdsAt(tray.instance(0).base, user);

  const keyOf = (user: string) => `comment_p-${user}_${user}`;

  /** The record the user holds under `key` now, as stored. */
  async function stored(user: string, key: string): Promise<InboxRecord> {
    const [record] = await tray.worker.storage.records.byKeys(user, [key], Date.now());
    if (!record) throw new Error(`no stored record ${key}`);
    return record;
  }

  /**
   * A comment on another post of the user, delivered by the worker: each user's announcements are
   * handled in order, so once the stream has its record it has had every earlier one.
   */
  async function afterEverything(stream: SseStream, user: string, at: number): Promise<void> {
    await tray.worker.deliver(commentOn(user, `p-${user}-other`, at));
    await stream.next(
      (event) =>
        event.event === 'record' &&
        dataOf<NotificationRecord>(event).v_tarid_uid === `comment_p-${user}-other_${user}`,
    );
  }

  /** Ben's record: one comment, delivered to his open stream. */
  async function withRecord(user: string): Promise<SseStream> {
    const stream = await tray.stream(user);
    await tray.worker.deliver(commentOn(user, `p-${user}`, 1));
    await stream.next(named('record'));
    return stream;
  }

  /** The comment deleted by the worker: the record is gone, and the stream told so. */
  async function removeIt(stream: SseStream, user: string): Promise<void> {
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );
    await stream.next(named('removed'));
  }

  /**
   * A new comment on the same post stored without announcing it (another worker, whose
   * announcement comes later), at the tray time `now`.
   */
  async function storeAgain(user: string, now: number): Promise<void> {
    await tray.worker.storage.writes.applyPersonal(
      [aComment('u-dan', { postId: `p-${user}`, owner: user }, { id: `cm-${user}-again`, at: now - 1 })],
      { now, retentionDays: 90 },
    );
  }

  it('sends the stored record, not the removal, when the removal is announced after the record came back', async () => {
    const user = 'u-removal-last';
    const stream = await withRecord(user);
    // The record is stored (again); the removal of its earlier life is announced only now.
    await tray.changes.recordsRemoved([{ userId: user, key: keyOf(user) }]);
    await afterEverything(stream, user, 2);
    expect(listAfter(stream.events)).to.deep.equal(await historyIds(user));
    expect(listAfter(stream.events)).to.include(keyOf(user));
  });

  it('sends a record stored again after its removal, also when its changedAt is older than the state the stream had', async () => {
    const user = 'u-back-older';
    const stream = await withRecord(user);
    const first = await stored(user, keyOf(user));
    await removeIt(stream, user);
    await storeAgain(user, first.changedAt - 10_000);
    const again = await stored(user, keyOf(user));
    expect(again.changedAt).to.be.below(first.changedAt);
    await tray.changes.recordsWritten([again]);
    await afterEverything(stream, user, 2);
    expect(listAfter(stream.events)).to.deep.equal(await historyIds(user));
    expect(listAfter(stream.events)).to.include(keyOf(user));
  });

  it('does not bring back a removed record when a state of it is announced late', async () => {
    const user = 'u-late-state';
    const stream = await withRecord(user);
    const first = await stored(user, keyOf(user));
    await removeIt(stream, user);
    // A state from before the removal, announced after it, stamped later than the one delivered.
    await tray.changes.recordsWritten([{ ...first, changedAt: first.changedAt + 1 }]);
    await afterEverything(stream, user, 2);
    expect(listAfter(stream.events)).to.deep.equal(await historyIds(user));
    expect(listAfter(stream.events)).to.not.include(keyOf(user));
  });

  // A state sent ahead of the catch-up's pages would move the stream's id past them: dropped
  // midway, the stream would resume after pages it never got.
  it('sends on a resume a record removed and stored again while away in its place among the changes, not first', async () => {
    const user = 'u-away-order';
    const first = await withRecord(user);
    first.close();
    for (const n of [1, 2, 3]) await tray.worker.deliver(commentOn(user, `p-${user}-${n}`, 2 + n));
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );
    await tray.worker.deliver(commentOn(user, `p-${user}`, 9));
    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await afterEverything(again, user, 10);
    const order = again.events
      .filter((event) => event.event === 'record')
      .map((event) => dataOf<NotificationRecord>(event).v_tarid_uid);
    expect(order.slice(0, 4)).to.deep.equal([
      `comment_p-${user}-1_${user}`,
      `comment_p-${user}-2_${user}`,
      `comment_p-${user}-3_${user}`,
      keyOf(user),
    ]);
    expect(listAfter([...first.events, ...again.events])).to.deep.equal(await historyIds(user));
  });

  it('sends on a resume a record removed and stored again while away, whose changedAt is before the resume’s window', async () => {
    const user = 'u-away-older';
    const first = await withRecord(user);
    const before = await stored(user, keyOf(user));
    first.close();
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );
    await storeAgain(user, before.changedAt - 60_000);
    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await afterEverything(again, user, 2);
    expect(listAfter([...first.events, ...again.events])).to.deep.equal(await historyIds(user));
    expect(listAfter([...first.events, ...again.events])).to.include(keyOf(user));
  });
});

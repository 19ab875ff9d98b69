import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, type SseEvent } from './support/sse-client.ts';

const shown = (events: readonly SseEvent[]) =>
  events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);

// A new stream owes nothing from before it opened: its client reads its history. But a state is
// stamped before its write lands (a worker's job waiting for a lock), so one stamped just before
// the stream opened can land after the client read its history. Announced while the client's
// connection was down, it reached no stream, and the reconnect's catch-up left it out as from
// before the opening: the client never got it.
describe('a stream that drops right after it opened', function () {
  this.timeout(30_000);
  const tray = useLiveTray({ instances: 1 });

  const write = (userId: string, targetId: string, now: number) =>
    tray.worker.storage.writes.applyPersonal(seedActivities({ userId, targetId, lastUpdate: now }), {
      now,
      retentionDays: 90,
      onWritten: (records) => tray.changes.recordsWritten(records),
    });

  it('gets, on its reconnect, a record stamped just before it opened and written after it dropped', async () => {
    const user = 'u-stamped-before-opening';
    const openedAt = Date.now();
    const first = await tray.stream(user);
    await first.next(named('unread'));
    first.close();
    await write(user, 'p-stamped-before', openedAt - 1_000);
    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await again.next(named('unread'));
    await again
      .next((event) => shown([event]).includes('p-stamped-before'), { timeoutMs: 3_000 })
      .catch(() => undefined);
    expect(shown(again.events)).to.deep.equal(['p-stamped-before']);
  });

  it('is not sent again, on its reconnect, a record stamped before it opened that it was sent live', async () => {
    const user = 'u-sent-live-before-opening';
    const openedAt = Date.now();
    const first = await tray.stream(user);
    await first.next(named('unread'));
    await write(user, 'p-live', openedAt - 1_000);
    await first.next((event) => shown([event]).includes('p-live'), { timeoutMs: 3_000 });
    first.close();
    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await again.next(named('unread'));
    // The catch-up has gone out once a change written after the reconnect is shown.
    await write(user, 'p-after', Date.now());
    await again.next((event) => shown([event]).includes('p-after'), { timeoutMs: 3_000 });
    expect(shown(again.events)).to.deep.equal(['p-after']);
  });
});

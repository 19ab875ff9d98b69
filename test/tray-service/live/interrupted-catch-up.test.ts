import { expect } from 'chai';
import { setTimeout } from 'node:timers/promises';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { SETTLE_MS } from '../../../tray-service/domain/settle-window.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { markedWhileAway } from './support/marked-while-away.ts';
import { dataOf, named, openSse, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';
const RECORDS = 400;
const FIRST_TAKES = 250;

const recordIds = (stream: SseStream) =>
  stream.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).v_tarid_uid);

// A mark-all-read gives every record one change time. The id keeps 64 states of one time at most,
// so a catch-up of hundreds dropped midway (a slow link, the catch-up's time bound) started again
// from its first record, and on a link too slow to take it whole never got further.
describe('a catch-up of records changed at one time, dropped midway', function () {
  this.timeout(120_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-interrupted-catch-up';

  it('resumes after the last record it got, sending none of those again', async () => {
    const base = tray.instance(0).base;
    const away = await markedWhileAway(tray.worker.storage, base, user, RECORDS);
    // The marks settle: a catch-up read later than this is sure no state of that time is to land.
    await setTimeout(SETTLE_MS + 200);

    const dropped = await openSse(`${base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': away,
    });
    await dropped.next(() => recordIds(dropped).length >= FIRST_TAKES, { timeoutMs: 30_000 });
    dropped.close();
    const got = recordIds(dropped);
    const resumeId = [...dropped.events].reverse().find((event) => event.id !== undefined)?.id ?? '';

    const resumed = await openSse(`${base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': resumeId,
    });
    await resumed.next(() => new Set([...got, ...recordIds(resumed)]).size >= RECORDS, { timeoutMs: 30_000 });
    // Anything still to come would be sent at once after the last page.
    await setTimeout(500);
    resumed.close();
    const again = recordIds(resumed).filter((id) => got.includes(id));
    expect(new Set([...got, ...recordIds(resumed)]).size).to.equal(RECORDS);
    expect(again.length, `records sent again of the ${got.length} the dropped stream got`).to.equal(0);
  });
});

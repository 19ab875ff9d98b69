import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { markedWhileAway } from './support/marked-while-away.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';
const RECORDS = 1_000;

// A reconnect's catch-up of more than the slow-client bound (1 MiB; a record is about a kilobyte)
// must still reach the client: written at once, it overflowed, the stream was dropped before its id
// moved, and every reconnect repeated the same catch-up.
describe('a resumed stream that missed more than a megabyte of records', function () {
  this.timeout(120_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-big-catch-up';

  it('receives every one of them, each connection getting further', async () => {
    const base = tray.instance(0).base;
    // Every record changes while the app is away.
    let lastId = await markedWhileAway(tray.worker.storage, base, user, RECORDS);

    const received = new Set<string>();
    const progress: number[] = [];
    for (let attempt = 0; attempt < 3 && received.size < RECORDS; attempt += 1) {
      const stream = await openSse(`${base}${STREAM}`, {
        Authorization: await bearer(user),
        'Last-Event-ID': lastId,
      });
      await stream
        .next(() => stream.events.filter(named('record')).length >= RECORDS, { timeoutMs: 30_000 })
        .catch(() => undefined);
      stream.close();
      for (const event of stream.events.filter(named('record')))
        received.add(dataOf<NotificationRecord>(event).v_tarid_uid);
      lastId = [...stream.events].reverse().find((event) => event.id !== undefined)?.id ?? lastId;
      progress.push(received.size);
    }
    expect(received.size, `records received after each connection: ${progress.join(', ')}`).to.equal(RECORDS);
  });
});

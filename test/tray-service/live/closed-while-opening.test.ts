import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer } from '../api/support/api-harness.ts';
import { named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { heldCounts } from './support/with-counts.ts';
import { writeRecord } from './support/write-record.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const STREAM = '/notifications/v3/stream';

// A stream's opening (its counts, its catch-up) waits for the user's earlier work. A client that
// reconnects in a loop leaves streams that closed while they waited: their openings read nothing.
describe('a stream that closed while its opening waited for the user’s turn', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const counts = heldCounts(() => suite.storage);
  const live = useLiveOnOwnRedis('live-closed-opening', counts.storage);

  it('reads nothing for it once its turn comes', async () => {
    const user = 'u-closed-opening';
    const publisher = createChangePublisher(live.redis, 'live', silent);
    const a = await openSse(`${live.instance.base}${STREAM}`, { Authorization: await bearer(user) });
    await a.next(named('unread'));

    // The user's turn is held by a count after a record.
    const { began, answer } = counts.hold();
    const before = a.events.length;
    await publisher.recordsWritten(await writeRecord(suite.storage, user, 'p-first', Date.now()));
    await a.next(named('record'), { from: before });
    await began;

    // B opens behind it and goes before its turn.
    const b = await openSse(`${live.instance.base}${STREAM}`, { Authorization: await bearer(user) });
    await waitFor(() => live.instance.live.hub.size === 2, 5_000, 'the second stream to open');
    b.close();
    await waitFor(() => live.instance.live.hub.size === 1, 5_000, 'the second stream to end');

    counts.calls = 0;
    let from = a.events.length;
    answer();
    await a.next(named('unread'), { from });
    // A later record's count is written in the user's order, after B's opening had its turn.
    from = a.events.length;
    await publisher.recordsWritten(await writeRecord(suite.storage, user, 'p-second', Date.now()));
    await a.next(named('unread'), { from });
    a.close();
    expect(counts.calls, 'counts read after the closed stream’s turn came').to.equal(1);
  });
});

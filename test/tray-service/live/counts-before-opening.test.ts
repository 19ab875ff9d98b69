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

// A count queued for the user's earlier stream (a record announced just before a page reload)
// may answer after the user's next stream was added and before that stream's opening has run:
// its `unread` must not reach the new stream first, which is not subscribed yet (a client that
// reads the tray once `unread` came would miss what is written before the subscription), and
// which owes a `reset` before anything else when it is told to reload.
describe('a count answering while a stream of the same user is still opening', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const counts = heldCounts(() => suite.storage);
  const live = useLiveOnOwnRedis('live-counts-opening', counts.storage);

  it('reaches the new stream only after its `reset`, which its own opening sends first', async () => {
    const user = 'u-counts-opening';
    const a = await openSse(`${live.instance.base}${STREAM}`, { Authorization: await bearer(user) });
    await a.next(named('unread'));

    const { began, answer } = counts.hold();
    const announced = await writeRecord(suite.storage, user, 'p-reload', Date.now());
    await createChangePublisher(live.redis, 'live', silent).recordsWritten(announced);
    await a.next(named('record'));
    await began;

    // The page reloads: A goes, B comes with an id too old to resume from.
    a.close();
    await waitFor(() => live.instance.live.hub.size === 0, 5_000, 'the first stream to end');
    const old = (Date.now() - 2 * 86_400_000).toString(36);
    const b = await openSse(`${live.instance.base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': old,
    });
    await waitFor(() => live.instance.live.hub.size === 1, 5_000, 'the second stream to open');
    answer();
    await b.next(named('reset'));
    await b.next(named('unread'));
    b.close();
    const order = b.events
      .map((event) => event.event)
      .filter((event) => event === 'reset' || event === 'unread');
    expect(order).to.deep.equal(['reset', 'unread']);
  });
});

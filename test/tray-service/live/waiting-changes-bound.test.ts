import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, lastId, named, openSse, type SseStream } from './support/sse-client.ts';
import { commentPublished } from './support/comment-published.ts';
import { useHeldCatchUp } from './support/use-held-catch-up.ts';

const MAX_WAITING = 20;

// A user's live changes wait for the user's turn: behind a catch-up (a reconnect's, or every
// stream's after the subscription came back, a few users at a time), each change held in memory
// until it ran. Nothing bounded them: a user far down a long resync, or a catch-up paced by a
// client that reads a page now and then, piled up every change published meanwhile, the fan-out
// Redis refused to buffer moved into the process. Past the bound, the streams end and resume from
// their ids, and the catch-up on the reconnect reads from storage what they did not get.
describe('live changes waiting behind a catch-up', function () {
  this.timeout(60_000);
  const live = useHeldCatchUp('waiting-bound', {
    heartbeatMs: 15_000,
    quietMs: 3_600_000,
    // The catch-up's own time bound far away: only the bound on waiting changes can end it.
    catchUpMs: 50_000,
    maxWaitingChanges: MAX_WAITING,
  });

  const url = () => `${live.instance.base}/notifications/v3/stream`;

  /** A stream of `user` resuming from an id of a stream just closed, its catch-up held. */
  async function resumeHeld(user: string): Promise<{ stream: SseStream; release: () => void }> {
    const first = await openSse(url(), { Authorization: await bearer(user) });
    const from = (await first.next(named('unread'))).id!;
    first.close();
    const release = live.hold(user);
    const stream = await openSse(url(), { Authorization: await bearer(user), 'Last-Event-ID': from });
    expect(stream.status).to.equal(200);
    return { stream, release };
  }

  const targetsOf = (stream: SseStream) =>
    new Set(stream.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId));

  it('keeps a stream whose waiting changes stay within the bound, and sends them after its catch-up', async () => {
    const user = 'u-within-bound';
    const { stream, release } = await resumeHeld(user);
    try {
      for (let i = 0; i < MAX_WAITING; i += 1)
        await commentPublished(live.storage, live.redis, user, `p-in-${i}`);
      release();
      await waitFor(() => targetsOf(stream).size === MAX_WAITING, 10_000, 'every record');
      let ended = false;
      void stream.ended.then(() => (ended = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(ended, 'the stream stays open').to.equal(false);
    } finally {
      release();
      stream.close();
    }
  });

  it('ends a stream past the bound to resume, and its reconnect gets every record from storage', async () => {
    const user = 'u-past-bound';
    const { stream, release } = await resumeHeld(user);
    let again: SseStream | undefined;
    try {
      const count = MAX_WAITING + 5;
      for (let i = 0; i < count; i += 1)
        await commentPublished(live.storage, live.redis, user, `p-past-${i}`);
      // Ended while its catch-up is still held (it would be for 50 s), with a hint to come back.
      await Promise.race([
        stream.ended,
        new Promise((_, fail) => setTimeout(() => fail(new Error('the stream was not ended')), 5_000)),
      ]);
      expect(stream.events.some((event) => event.retry !== undefined)).to.equal(true);
      // Its reconnect, while the changes that passed the bound still wait for the user's turn:
      // they count for the streams they were for, not for this one, which a change does not end.
      again = await openSse(url(), {
        Authorization: await bearer(user),
        'Last-Event-ID': lastId(stream.events),
      });
      let endedAgain = false;
      void again.ended.then(() => (endedAgain = true));
      await commentPublished(live.storage, live.redis, user, `p-past-${count}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(endedAgain, 'the reconnect ended by one change').to.equal(false);
      release();
      await waitFor(() => targetsOf(again!).size === count + 1, 10_000, 'every record on the reconnect');
    } finally {
      release();
      stream.close();
      again?.close();
    }
  });
});

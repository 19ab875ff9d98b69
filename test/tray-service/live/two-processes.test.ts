import { expect } from 'chai';
import type Bull from 'bull';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { parseChanges } from '../../../tray-service/live/live-change.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { waitFor } from '../../support/wait-for.ts';
import { reportFigures } from '../../reliability/support/report-figures.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../../reliability/support/tray-process.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { commentEvent, minute, userDeleteEvent } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse, type SseEvent } from './support/sse-client.ts';

// tray-service/main.ts as two processes (API and worker each) on one queue, as behind a load
// balancer: the wiring of the worker's announcements, the streams and the shutdown.
describe('live tray across two tray-service processes', function () {
  this.timeout(120_000);
  const trays: TrayProcess[] = [];
  after(async () => {
    for (const tray of trays) await tray.kill();
  });
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const streamPrefix = uniqueName('live');
  let queue: Bull.Queue<WebhookJobData>;

  before(async () => {
    for (let i = 0; i < 2; i += 1) {
      trays.push(
        await startTrayProcess({
          redisUrl: testStack().redisUrl,
          prefix,
          env: { ...suite.env, STREAM_REDIS_PREFIX: streamPrefix },
        }),
      );
    }
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  });
  after(() => queue?.close());

  const token = (user: string) => trayToken(user);

  it('delivers a queued event to streams on both processes, whichever worker took the job', async () => {
    const user = 'u-two';
    const streams = await Promise.all(
      trays.map(async (tray) =>
        openSse(`http://127.0.0.1:${tray.port}/notifications/v3/stream`, {
          Authorization: `Bearer ${await token(user)}`,
        }),
      ),
    );
    await Promise.all(streams.map((stream) => stream.next(named('unread'))));
    const envelope = commentEvent({
      postId: 'p-two',
      postOwner: user,
      author: 'u-cid',
      createdAt: minute(1),
    });
    await queue.add(jobDataOf(envelope), { ...webhookJobOptions, jobId: 'two-processes' });
    for (const stream of streams) {
      const record = await stream.next(named('record'), { timeoutMs: 10_000 });
      expect(dataOf<NotificationRecord>(record).v_tarid_uid).to.equal(`comment_p-two_${user}`);
    }
    for (const stream of streams) stream.close();
  });

  // A deletion empties the deleted user's own tray: their open streams (a token stays valid until
  // it expires) must empty their lists too, live and when they reconnect from before it.
  it("tells a deleted user's own streams `cleared`, live and on reconnect", async () => {
    const user = 'u-gone';
    await seedRecords(suite.storage, [{ userId: user, targetId: 'p-gone', lastUpdate: Date.now() - 60_000 }]);
    const url = (tray: TrayProcess) => `http://127.0.0.1:${tray.port}/notifications/v3/stream`;
    const stream = await openSse(url(trays[0]!), { Authorization: `Bearer ${await token(user)}` });
    const opened = (await stream.next(named('unread'))).id ?? '';
    await queue.add(jobDataOf(userDeleteEvent(user)), {
      ...webhookJobOptions,
      jobId: 'two-processes-delete',
    });
    await stream.next(named('cleared'), { timeoutMs: 10_000 });
    stream.close();
    const again = await openSse(url(trays[1]!), {
      Authorization: `Bearer ${await token(user)}`,
      'Last-Event-ID': opened,
    });
    await again.next(named('cleared'), { timeoutMs: 10_000 });
    again.close();
  });

  it('wakes each ended snooze once, though both processes wake, onto every stream within 1 s of its until', async () => {
    const users = ['u-wake-1', 'u-wake-2', 'u-wake-3'];
    const perUser = 20;
    const before = Date.now() - 60_000;
    const keysOf = new Map<string, string[]>();
    for (const user of users) {
      const specs = Array.from({ length: perUser }, (_, i) => ({
        userId: user,
        targetId: `p-wake-${i}`,
        lastUpdate: before - i,
      }));
      keysOf.set(user, await seedRecords(suite.storage, specs));
    }
    // Every announcement on the users' channels, counted by record: a record woken twice would be
    // published twice, whatever the streams make of it.
    const published = new Map<string, number>();
    const subscriber = createRedis(testStack().redisUrl);
    await subscriber.subscribe(...new Set(users.map((user) => changeChannel(streamPrefix, shardOf(user)))));
    subscriber.on('message', (_channel: string, message: string) => {
      for (const change of parseChanges(message))
        if (change.kind === 'record')
          for (const record of change.records)
            published.set(record.key, (published.get(record.key) ?? 0) + 1);
    });
    const streams = await Promise.all(
      users.flatMap((user) =>
        trays.map(async (tray) => ({
          user,
          stream: await openSse(`http://127.0.0.1:${tray.port}/notifications/v3/stream`, {
            Authorization: `Bearer ${await token(user)}`,
          }),
        })),
      ),
    );
    try {
      await Promise.all(streams.map(({ stream }) => stream.next(named('unread'))));
      const until = Date.now() + 3_000;
      for (const user of users)
        await suite.storage.inbox!.mark(user, { kind: 'snooze', ids: keysOf.get(user)!, until }, Date.now());
      // Marks that took past until (a loaded machine) leave the wake-up to be timed from their end.
      const dueAt = Math.max(until, Date.now());
      const woken = (events: readonly SseEvent[]) =>
        events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event));
      await waitFor(
        () => streams.every(({ stream }) => woken(stream.events).length >= perUser),
        until - Date.now() + 5_000,
        'every woken record on every stream',
      );
      const lateBy = Date.now() - dueAt;
      reportFigures('snooze wake-up, two processes', {
        records: users.length * perUser,
        streams: streams.length,
        msAfterUntilEveryStreamHadEveryRecord: lateBy,
      });
      expect(lateBy, 'ms after until when the last stream had every record').to.be.at.most(1_000);
      // Time for a second wake-up of any record to show.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const { user, stream } of streams) {
        const records = woken(stream.events);
        expect(records.map((record) => record.v_tarid_uid).sort()).to.deep.equal(
          [...keysOf.get(user)!].sort(),
        );
        for (const record of records)
          expect(record).to.include({ hasRead: false, isSeen: false, archivedAt: null, snoozedUntil: null });
      }
      const keys = users.flatMap((user) => keysOf.get(user)!);
      expect(keys.map((key) => published.get(key))).to.deep.equal(keys.map(() => 1));
    } finally {
      for (const { stream } of streams) stream.close();
      subscriber.disconnect();
    }
  });

  it('on SIGTERM closes its streams with a retry hint, then exits cleanly', async () => {
    const tray = trays[1];
    if (!tray) throw new Error('no second process');
    const stream = await openSse(`http://127.0.0.1:${tray.port}/notifications/v3/stream`, {
      Authorization: `Bearer ${await token('u-term')}`,
    });
    await stream.next(named('unread'));
    const exited = new Promise<number | null>((resolve) => tray.child.once('exit', (code) => resolve(code)));
    tray.child.kill('SIGTERM');
    await stream.ended;
    const retry = await stream.next(named('retry'));
    expect(retry.retry).to.be.within(1_000, 5_000);
    expect(await exited).to.equal(0);
  });
});

import { expect } from 'chai';
import type Bull from 'bull';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../../reliability/support/tray-process.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';

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

import { expect } from 'chai';
import type Bull from 'bull';
import { openTrayStream } from '../../../client/src/stream/index.ts';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../../reliability/support/tray-process.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { commentEvent, minute } from '../../tray-service/worker/event-builder.ts';
import { jobDataOf } from '../../tray-service/worker/worker-harness.ts';
import { collectStream } from './support/collect-stream.ts';

// tray-service/main.ts as real processes: the client streams from one, which is stopped and started
// again on the same port, while the other keeps working the queue.
describe('openTrayStream across a tray process restart', function () {
  this.timeout(180_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const streamPrefix = uniqueName('live');
  let port: number;
  let streamed: TrayProcess | undefined;
  let working: TrayProcess | undefined;
  let queue: Bull.Queue<WebhookJobData> | undefined;
  const controller = new AbortController();

  const start = (env: Record<string, string> = {}) =>
    startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      env: { ...suite.env, STREAM_REDIS_PREFIX: streamPrefix, ...env },
    });

  before(async () => {
    port = await freePort();
    streamed = await start({ TRAY_PORT: String(port) });
    working = await start();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  });
  after(async () => {
    controller.abort();
    await streamed?.kill();
    await working?.kill();
    await queue?.close();
  });

  /** Queues a comment on `postId` for the user and waits until a worker has stored it. */
  const comment = async (user: string, postId: string, at: number) => {
    if (!queue) throw new Error('no queue');
    const envelope = commentEvent({ postId, postOwner: user, createdAt: minute(at) });
    const job = await queue.add(jobDataOf(envelope), { ...webhookJobOptions, jobId: postId });
    await job.finished();
  };

  it('misses no record and repeats none, after a SIGTERM and after a SIGKILL', async () => {
    const user = 'u-restart';
    const stream = collectStream(
      openTrayStream({
        baseUrl: `http://127.0.0.1:${port}`,
        getToken: () => trayToken(user),
        signal: controller.signal,
        reconnect: { initialMs: 250, maxMs: 1_000 },
      }),
    );
    await stream.next('unread', { timeoutMs: 10_000 });
    const expected: string[] = [];
    const live = async (postId: string) => {
      await comment(user, postId, expected.push(postId));
      await stream.next('record', { match: (event) => event.data.targetId === postId, timeoutMs: 10_000 });
    };
    await live('p-1');
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const stopped = streamed;
      if (!stopped) throw new Error('no tray process to stop');
      const exited = new Promise((resolve) => stopped.child.once('exit', resolve));
      stopped.child.kill(signal);
      await exited;
      // Stored while nothing serves the stream: only a resume from the last id brings these.
      for (const postId of [`p-${signal}-a`, `p-${signal}-b`])
        await comment(user, postId, expected.push(postId));
      streamed = await start({ TRAY_PORT: String(port) });
      await stream.next('record', {
        match: (event) => event.data.targetId === `p-${signal}-b`,
        timeoutMs: 20_000,
      });
      await live(`p-after-${signal}`);
    }
    expect(stream.records().map((record) => record.targetId)).to.deep.equal(expected);
  });
});

import { expect } from 'chai';
import type Bull from 'bull';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../shared/queue/webhook-queue.ts';
import type { NotificationRecord } from '../../tray-service/http/to-notification-record.ts';
import {
  startTrayProcess,
  trayMetricsToken,
  trayToken,
  type TrayProcess,
} from '../reliability/support/tray-process.ts';
import { uniqueName, useQueuePrefix } from '../support/suite-resources.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { testStack } from '../support/test-stack.ts';
import { waitFor } from '../support/wait-for.ts';
import { dataOf, named, openSse, type SseStream } from './live/support/sse-client.ts';
import { commentEvent, minute } from './worker/event-builder.ts';
import { jobDataOf } from './worker/worker-harness.ts';

// TRAY_ROLE splits tray-service/main.ts into stream servers and workers that scale apart: the
// API-only process takes no job, the worker-only one serves operators only, and a record the
// worker writes still reaches a stream on the API process.
describe('tray-service/main.ts roles (TRAY_ROLE)', function () {
  this.timeout(120_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const streamPrefix = uniqueName('live');
  const processes: TrayProcess[] = [];
  let api: TrayProcess | undefined;
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let stream: SseStream | undefined;
  const start = async (role: string) => {
    const started = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      env: { ...suite.env, TRAY_ROLE: role, STREAM_REDIS_PREFIX: streamPrefix },
    });
    processes.push(started);
    return started;
  };
  const token = (user: string) => trayToken(user);

  before(async () => {
    api = await start('api');
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  });
  after(async () => {
    stream?.close();
    for (const started of processes) await started.kill();
    await queue?.close();
  });

  let job: Bull.Job<WebhookJobData> | undefined;
  it('an API-only process serves the tray and its streams, and takes no queued job', async () => {
    const base = `http://127.0.0.1:${api!.port}`;
    const auth = { Authorization: `Bearer ${await token('u-role')}` };
    stream = await openSse(`${base}/notifications/v3/stream`, auth);
    await stream.next(named('unread'));
    const history = await fetch(`${base}/notifications/v3`, { headers: auth });
    expect(history.status).to.equal(200);
    const envelope = commentEvent({
      postId: 'p-role',
      postOwner: 'u-role',
      author: 'u-cid',
      createdAt: minute(1),
    });
    job = await queue!.add(jobDataOf(envelope), { ...webhookJobOptions, jobId: 'role-job' });
    await new Promise((done) => setTimeout(done, 2_000));
    expect(await job.getState()).to.equal('waiting');
  });

  it('a worker-only process takes the job, and its record reaches the stream on the API process', async () => {
    await start('worker');
    const record = await stream!.next(named('record'), { timeoutMs: 15_000 });
    expect(dataOf<NotificationRecord>(record).v_tarid_uid).to.equal('comment_p-role_u-role');
    // The record is streamed as the worker writes it, before Bull moves the job out of 'active'
    // (and getState reads its lists one by one, so mid-move it says 'stuck'): wait for it to settle.
    let state = await job!.getState();
    await waitFor(
      async () => !['active', 'stuck'].includes((state = await job!.getState())),
      10_000,
      'the job to leave the active list',
    );
    expect(state).to.equal('completed');
  });

  it('the worker-only process answers operators only: health, readiness, metrics; the API is not there', async () => {
    const base = `http://127.0.0.1:${processes[1]!.port}`;
    expect((await fetch(`${base}/healthz`)).status).to.equal(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).to.equal(200);
    expect(await ready.json()).to.nested.include({ 'checks.storage.ok': true, 'checks.redis.ok': true });
    expect((await fetch(`${base}/metrics`)).status).to.equal(401);
    const metricsAuth = { Authorization: `Bearer ${trayMetricsToken}` };
    const metrics = await (await fetch(`${base}/metrics`, { headers: metricsAuth })).text();
    expect(metrics).to.match(/^tray_worker_jobs_total\{[^}]*outcome="completed"[^}]*\} 1$/m);
    // The queue's depth, read from Redis at the scrape: the one job is done, none waits.
    expect(metrics).to.match(/^tray_queue_jobs\{[^}]*state="waiting"[^}]*\} 0$/m);
    const tray = await fetch(`${base}/notifications/v3`, {
      headers: { Authorization: `Bearer ${await token('u-role')}` },
    });
    expect(tray.status).to.equal(404);
    expect(await tray.json()).to.include({ status: 'error', code: 404000 });
  });
});

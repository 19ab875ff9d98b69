import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import type Bull from 'bull';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../shared/queue/webhook-queue.ts';
import { SHUTDOWN_DEADLINE_MS } from '../../shared/process/on-shutdown.ts';
import { startTrayProcess, type TrayProcess } from '../reliability/support/tray-process.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { commentEvent, minute } from './worker/event-builder.ts';
import { jobDataOf } from './worker/worker-harness.ts';

/** The log lines about the shutdown, for a failing assertion's message. */
const shutdownLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => /shutting down|stopped|did not finish|"level":(40|50|60)/.test(line))
    .join('\n');

/** The exit code once `child` exits, or null when it is still running `withinMs` later. */
function exitCode(child: ChildProcess, withinMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), withinMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

// SIGTERM while jobs keep arriving: the worker finishes the jobs it holds, takes no more, and the
// process exits 0 within its deadline (docs/operations.md#health-metrics-and-shutdown).
describe('tray-service/main.ts shutdown', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let tray: TrayProcess | undefined;
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let feed: NodeJS.Timeout | undefined;
  let added = 0;

  before(() => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  });
  afterEach(async () => {
    clearInterval(feed);
    await tray?.kill();
  });
  after(async () => {
    await queue?.close();
  });

  /** Adds jobs at 20 a second, as the receiver would under steady traffic. */
  const startFeed = () => {
    feed = setInterval(() => {
      for (let i = 0; i < 2; i += 1) {
        added += 1;
        const envelope = commentEvent({ postId: `p-${added}`, postOwner: 'u-ana', createdAt: minute(1) });
        void queue!.add(jobDataOf(envelope), { ...webhookJobOptions, jobId: `shutdown-${added}` });
      }
    }, 100);
  };

  const expectNothingLeftActive = async () => {
    const counts = await queue!.getJobCounts();
    expect(counts.active, 'jobs left active (to stall later)').to.equal(0);
    expect(counts.failed).to.equal(0);
  };

  it('with jobs arriving, exits 0 before the deadline and leaves no job active', async () => {
    tray = await startTrayProcess({ redisUrl: testStack().redisUrl, prefix, env: suite.env });
    startFeed();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    tray.child.kill('SIGTERM');
    const code = await exitCode(tray.child, SHUTDOWN_DEADLINE_MS + 2_000);
    clearInterval(feed);
    expect(code, shutdownLines(tray.output())).to.equal(0);
    expect(tray.output()).not.to.include('shutdown did not finish in time');
    await expectNothingLeftActive();
  });
});

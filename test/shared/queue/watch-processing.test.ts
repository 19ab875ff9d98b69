import type Bull from 'bull';
import { expect } from 'chai';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { watchProcessing } from '../../../shared/queue/watch-processing.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('watchProcessing: a consumer bull could not start, said, the process asked to stop', function () {
  this.timeout(30_000);
  const redis = useRefusableRedis();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData> | undefined;
  /** A URL of an ACL user that may do all but subscribe. */
  const refusingSubscribe = async () => {
    const url = await redis.userUrl('no-subscribe', 'no-subscribe-password');
    await redis.admin.call('ACL', 'SETUSER', 'no-subscribe', '-subscribe', '-psubscribe');
    return url;
  };
  afterEach(async () => {
    await queue?.close().catch(() => undefined);
    queue = undefined;
  });

  // A Redis that refuses the consumer's set-up (here its SUBSCRIBE, refused to its ACL user; a
  // connection closed under it fails the same way): bull takes no job afterwards. Unwatched, the
  // rejection ended the process as an unhandled one, naming no queue.
  it('logs one fatal line naming the queue and asks to stop once', async () => {
    const { logger, lines } = recordingLogger();
    queue = createWebhookQueue({ redis: await refusingSubscribe(), prefix });
    const stops: string[] = [];
    watchProcessing(
      queue.process(1, async () => undefined),
      { name: 'webhook', logger, closing: () => false, onStopped: (reason) => stops.push(reason) },
    );
    await waitFor(() => stops.length > 0, 10_000, 'the stop asked for');
    expect(stops).to.have.length(1);
    expect(stops[0]).to.match(/^the webhook queue's consumer could not start taking jobs: NOPERM/);
    expect(lines.filter((line) => line.level === 60).map((line) => line.msg)).to.deep.equal(stops);
  });

  // The shutdown closing the connections while bull still sets the consumer up: nothing failed.
  it('says nothing once the consumer is closing', async () => {
    const { logger, lines } = recordingLogger();
    queue = createWebhookQueue({ redis: await refusingSubscribe(), prefix });
    const stops: string[] = [];
    const processing = queue.process(1, async () => undefined);
    watchProcessing(processing, {
      name: 'webhook',
      logger,
      closing: () => true,
      onStopped: (reason) => stops.push(reason),
    });
    const failed = await processing.then(
      () => false,
      () => true,
    );
    expect(failed, 'the set-up failed').to.equal(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(stops).to.deep.equal([]);
    expect(lines).to.deep.equal([]);
  });
});

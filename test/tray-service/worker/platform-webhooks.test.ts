import { expect } from 'chai';
import { banEvent } from '../bans/ban-events.ts';
import { commentEvent, dedupeKeyOf, minute, userDeleteEvent } from './event-builder.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useWorker, type WorkerHarness } from './worker-harness.ts';

const names = async (worker: WorkerHarness, userId: string) =>
  (await worker.records(userId)).map((record) => [
    record.lastActionId,
    record.actors.map((actor) => actor.name),
  ]);
const banned = async (worker: WorkerHarness) =>
  (await worker.storage.bans.all()).map((change) => change.userId).sort();

// What docs/receiver.md#what-a-standard-webhooks-sender-gets promises, through the real bull consumer.
describe('tray worker: TRAY_PLATFORM_WEBHOOKS=eu,us', () => {
  const { logger, messages } = recordingLogger();
  const worker = useWorker({ platformWebhooks: { names: new Set(['eu', 'us']) }, logger });

  it("stores a partner's ban, comment and user.didDelete as `foreign` and applies none of them", async () => {
    await worker.deliver(commentEvent({ commentId: 'cm-w1', author: 'u-cid', postOwner: 'u-ana' }), {
      webhook: 'eu',
      scheme: 'platform',
    });
    expect(await names(worker, 'u-ana')).to.deep.equal([['cm-w1', ['Cid']]]);

    const partner = { webhook: 'partner', scheme: 'platform' } as const;
    const events = [
      banEvent('ban', ['u-ana'], minute(0)),
      commentEvent({ commentId: 'cm-w2', author: 'u-ben', postId: 'p-w2', postOwner: 'u-dee' }),
      userDeleteEvent('u-cid'),
    ];
    for (const envelope of events) {
      const job = await worker.deliver(envelope, partner);
      expect(await job.getState()).to.equal('completed');
      expect(await worker.event(dedupeKeyOf(envelope))).to.deep.include({
        status: 'foreign',
        webhook: 'partner',
      });
    }
    expect(await banned(worker)).to.deep.equal([]);
    expect(await names(worker, 'u-dee')).to.deep.equal([]);
    expect(await names(worker, 'u-ana')).to.deep.equal([['cm-w1', ['Cid']]]);
    const metrics = await worker.registry.getSingleMetricAsString('tray_worker_events_total');
    expect(metrics).to.match(/tray_worker_events_total\{status="foreign"[^}]*\} 3/);
    // Said once for the webhook, not per event: a region left out by mistake shows in the log.
    expect(messages.filter((message) => message.includes('stored as foreign'))).to.have.length(1);

    await worker.deliver(banEvent('ban', ['u-eve'], minute(0)), { webhook: 'us', scheme: 'platform' });
    expect(await banned(worker)).to.deep.equal(['u-eve']);
  });
});

describe('tray worker: TRAY_PLATFORM_WEBHOOKS unset', () => {
  const worker = useWorker();

  it('never applies a Standard Webhooks delivery, and applies the platform scheme and jobs without a scheme', async () => {
    const ban = banEvent('ban', ['u-fay'], minute(0));
    await worker.deliver(ban, { webhook: 'billing', scheme: 'standard-webhooks' });
    expect(await worker.event(dedupeKeyOf(ban))).to.deep.include({ status: 'foreign', webhook: 'billing' });
    expect(await banned(worker)).to.deep.equal([]);

    await worker.deliver(
      commentEvent({ commentId: 'cm-w3', author: 'u-gus', postId: 'p-w3', postOwner: 'u-hal' }),
      {
        webhook: 'dev',
        scheme: 'platform',
      },
    );
    expect(await names(worker, 'u-hal')).to.deep.equal([['cm-w3', ['Gus']]]);
    await worker.deliver(
      commentEvent({ commentId: 'cm-w4', author: 'u-gus', postId: 'p-w4', postOwner: 'u-ian' }),
    );
    expect(await names(worker, 'u-ian')).to.deep.equal([['cm-w4', ['Gus']]]);
  });
});

import { expect } from 'chai';
import { REDIS_CALL_BUDGET_MS } from '../../../shared/redis/hung-redis-breaker.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useHungRedis } from '../../support/hung-redis.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named } from './support/sse-client.ts';

// A Redis that stops answering but keeps the publisher's connection open (a stopped server, a
// route that died without a reset): each announcement waited on it for as long as it hung, and
// with it the API call that announced (a mark-read) or the job.
describe('a change announced while the publisher’s Redis hangs', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const hung = useHungRedis();

  it('is stored and answered within the call’s budget, and reaches the open stream once Redis answers again', async () => {
    const { redis, hang } = hung();
    const { logger, messages } = recordingLogger();
    const publisher = createChangePublisher(redis, tray.prefix, logger, { retryMs: 100 });
    const user = 'u-hung-publish';
    const live = await tray.stream(user);
    hang();
    const now = Date.now();
    const started = Date.now();
    await tray.worker.storage.writes.applyPersonal(
      seedActivities({ userId: user, targetId: 'p-hung', lastUpdate: now }),
      {
        now,
        retentionDays: 90,
        onWritten: (records) => publisher.recordsWritten(records),
      },
    );
    expect(Date.now() - started).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    // The connection is dropped once a call stays unanswered, made again (the proxy carries new
    // connections), and the owed change goes out as a resync the stream catches up from.
    await live.next(
      (event) => named('record')(event) && dataOf<NotificationRecord>(event).targetId === 'p-hung',
      { timeoutMs: 20_000 },
    );
    // Said once, in words an operator can search for.
    expect(
      messages.filter((message) => message.startsWith('Redis left a call unanswered too long')),
    ).to.have.lengthOf(1);
  });
});

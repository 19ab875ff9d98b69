import type Bull from 'bull';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requeueSpool } from '../../../../scripts/lib/replay/requeue-spool.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';

const job = (n: number): WebhookJobData => ({
  dedupeKey: createHash('sha256').update(`requeue-${n}`).digest('hex'),
  webhook: 'main',
  receivedAt: '2026-11-20T10:00:00.000Z',
  event: 'post.didCreate',
  data: { n, padding: 'x'.repeat(200) },
});

describe('requeueSpool (npm run replay -- spool)', function () {
  this.timeout(30_000);
  const prefix = useQueuePrefix();
  let dir: string;
  let queue: Bull.Queue<WebhookJobData>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'requeue-spool-'));
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await queue.close();
  });

  // A copy still being written (or a segment a live receiver appends to) grew while it was read:
  // the end the cut-off check looked at was not where the read stopped, so the line the check
  // found torn was read whole and counted invalid, and the new true last line was skipped.
  it('reads the file only up to where it judged the last line, however it grows meanwhile', async () => {
    const file = join(dir, 'segment-000000000001.ndjson');
    // Past one read's 64 KiB, so the read is still going when the first line is queued.
    const lines = Array.from({ length: 400 }, (_, n) => JSON.stringify(job(n)));
    writeFileSync(file, `${lines.join('\n')}\n${JSON.stringify(job(400)).slice(0, 40)}`);
    let grown = false;
    const target = { queue, redis: queue.client, markPrefix: prefix, dedupeSeconds: 60 };
    const counts = await requeueSpool(target, file, () => {
      if (grown) return;
      grown = true;
      // The torn line finished, and one more whole line after it.
      appendFileSync(file, `${JSON.stringify(job(400)).slice(40)}\n${JSON.stringify(job(401))}\n`);
    });
    expect(grown).to.equal(true);
    expect(counts).to.deep.include({ queued: 400, alreadyQueued: 0, invalid: 0, cutOff: 1 });
    expect(await queue.getJob(job(401).dedupeKey)).to.equal(null);
  });
});

import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dedupeKey } from '../../receiver/dedupe-key.ts';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { createWebhookQueue } from '../../shared/queue/webhook-queue.ts';
import { postSigned } from '../reliability/support/post-signed.ts';
import {
  faultSecret,
  startReceiverProcess,
  waitUntilDrained,
  type ReceiverProcess,
} from '../reliability/support/receiver-process.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { channelDidCreate, sign } from './support/signed-request.ts';

// Two receiver processes on one SPOOL_DIR: "one per core" left at the default SPOOL_DIR, or a
// rolling restart that starts the new receiver before the old one has stopped. The one that starts
// second must not take (and delete) what the first is still appending to.
describe('receiver/main.ts: two receivers on one SPOOL_DIR', function () {
  this.timeout(60_000);
  const prefix = useQueuePrefix();
  let dir = '';
  const started: ReceiverProcess[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'receiver-shared-spool-'));
  });
  after(async () => {
    for (const receiver of started) await receiver.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('queues every event either acknowledged, also those the first spooled after the second had drained', async () => {
    const spoolDir = join(dir, 'spool');
    // The first cannot reach Redis (nothing listens on its port): it spools every event.
    const first = await startReceiverProcess({
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      prefix,
      spoolDir,
    });
    started.push(first);
    const bodies = Array.from({ length: 6 }, (_, n) => channelDidCreate(`shared-spool-${n}`));
    const deliver = async (body: string) =>
      expect((await postSigned(first.url, body, sign(body, faultSecret))).status).to.equal(200);
    for (const body of bodies.slice(0, 3)) await deliver(body);

    const second = await startReceiverProcess({ redisUrl: testStack().redisUrl, prefix, spoolDir });
    started.push(second);
    await waitUntilDrained(second.port, 15_000);
    for (const body of bodies.slice(3)) await deliver(body);
    // Stopped with its events still spooled (it never reached Redis): the next start takes them.
    await first.stop();

    const third = await startReceiverProcess({ redisUrl: testStack().redisUrl, prefix, spoolDir });
    started.push(third);
    await waitUntilDrained(third.port, 15_000);
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      const ids = (await queue.getWaiting(0, -1)).map((job) => String(job.id)).sort();
      expect(ids).to.deep.equal(bodies.map((body) => dedupeKey(Buffer.from(body))).sort());
    } finally {
      await queue.close();
    }
  });
});

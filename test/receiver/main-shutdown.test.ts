import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookQueue } from '../../shared/queue/webhook-queue.ts';
import { SHUTDOWN_DEADLINE_MS } from '../../shared/process/on-shutdown.ts';
import { postSigned } from '../reliability/support/post-signed.ts';
import {
  faultSecret,
  startReceiverProcess,
  type ReceiverProcess,
} from '../reliability/support/receiver-process.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { channelDidCreate, sign } from './support/signed-request.ts';

// A client that never finishes its request body must not hold the receiver past its shutdown
// deadline: the drain gives up on it in time for the receiver's own close (spool, queue) to run.
describe('receiver/main.ts shutdown', function () {
  this.timeout(40_000);
  const prefix = useQueuePrefix();
  let dir = '';
  let receiver: ReceiverProcess | undefined;
  let slow: Socket | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'receiver-shutdown-'));
  });
  after(async () => {
    slow?.destroy();
    await receiver?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with a client sending its body slowly, exits 0 before the deadline and keeps what it acknowledged', async () => {
    receiver = await startReceiverProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      spoolDir: join(dir, 'spool'),
    });
    const body = channelDidCreate('ch-shutdown');
    const acknowledged = await postSigned(receiver.url, body, sign(body, faultSecret));
    expect(acknowledged.status).to.equal(200);

    const socket = connect(receiver.port, '127.0.0.1');
    slow = socket;
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
    );
    // A byte a second: never idle long enough for a timeout, never done.
    const drip = setInterval(() => socket.write(' '), 1_000);
    socket.once('close', () => clearInterval(drip));
    await new Promise((resolve) => setTimeout(resolve, 500));

    const { child } = receiver;
    const code = new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), SHUTDOWN_DEADLINE_MS + 2_000);
      child.once('exit', (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
    child.kill('SIGTERM');
    expect(await code, receiver.output()).to.equal(0);
    clearInterval(drip);

    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      expect((await queue.getJobCounts()).waiting).to.equal(1);
    } finally {
      await queue.close();
    }
  });
});

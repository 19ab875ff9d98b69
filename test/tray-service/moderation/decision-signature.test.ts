import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import { createModerationStep } from '../../../tray-service/moderation/create-moderation-step.ts';
import {
  createDecisionEnqueuer,
  createDecisionsQueue,
  startDecisionDelivery,
  type DecisionJobData,
} from '../../../tray-service/moderation/decision-delivery.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { eventDoc } from '../admin/admin-fixtures.ts';
import { eventually } from './moderation-fixtures.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const rule = createBlockedWordsRule(parseBlockedWords(['spam'], 'exact'));
const SECRET = 'moderation-webhook-secret-of-32-characters';

/**
 * What a decision's receiver does (the example of docs/operations.md#moderation), written here
 * independently of the service's code: HMAC-SHA256 of `${timestamp}.${body}`, compared in constant
 * time, and a timestamp older or newer than the tolerance refused (a replay).
 */
function verifyDecision(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers['x-moderation-timestamp']);
  const signature = String(headers['x-moderation-signature'] ?? '');
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(
    `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  // Lengths in bytes: a header of the right length in characters may hold more bytes (Node reads
  // header values as latin1), and timingSafeEqual throws on buffers of unequal lengths.
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

/** A real HTTP server that answers 204 to a verified decision and 401 to anything else. */
async function startVerifyingReceiver(secret: string) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const verified = verifyDecision(secret, req.headers, body, Math.floor(Date.now() / 1000));
      received.push({ headers: req.headers, body, verified });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/decisions`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('signed moderation decisions (MODERATION_WEBHOOK_SECRET)', () => {
  const suite = useTrayStorage();

  async function deliverOne(receiverSecret: string, attempts: number) {
    const receiver = await startVerifyingReceiver(receiverSecret);
    const queue: BullQueue<DecisionJobData> = createDecisionsQueue({
      redis: testStack().redisUrl,
      prefix: useQueuePrefix(),
    });
    const decisions = suite.storage.decisions;
    const delivery = startDecisionDelivery({
      queue,
      decisions,
      ping: () => suite.storage.ping(),
      url: receiver.url,
      secret: SECRET,
      timeoutMs: 2_000,
      logger,
    });
    const step = createModerationStep({
      rules: [rule],
      decisions,
      enqueue: createDecisionEnqueuer(queue, { attempts, backoffMs: 20 }),
      logger,
    });
    const event = eventDoc({ data: { post: { postId: 'p-1', postedUserId: 'u-x', text: 'spam' } } });
    await step(event);
    const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
    const settled = await eventually(async () => {
      const doc = await decisions.get(pending!.id);
      return doc?.delivery === 'delivered' || doc?.delivery === 'failed' ? doc : undefined;
    });
    await delivery.close();
    await receiver.close();
    return { settled, received: receiver.received };
  }

  it('a receiver holding the secret verifies the decision and accepts it', async () => {
    const { settled, received } = await deliverOne(SECRET, 3);
    expect(settled.delivery).to.equal('delivered');
    expect(received).to.have.length(1);
    expect(received[0]!.verified).to.equal(true);
    expect(received[0]!.headers['x-moderation-timestamp']).to.match(/^\d{10}$/);
  });

  it('a receiver holding another secret refuses it, and the decision is not delivered', async () => {
    const { settled, received } = await deliverOne('another-secret-of-at-least-32-characters', 2);
    expect(settled.delivery).to.equal('failed');
    expect(received.map((request) => request.verified)).to.deep.equal([false, false]);
  });

  it('a captured decision replayed after the tolerance window is refused; a changed body too', async () => {
    const { received } = await deliverOne(SECRET, 3);
    const [{ headers, body }] = received as [Received];
    const sentAt = Number(headers['x-moderation-timestamp']);
    expect(verifyDecision(SECRET, headers, body, sentAt + 299)).to.equal(true);
    expect(verifyDecision(SECRET, headers, body, sentAt + 301)).to.equal(false);
    expect(verifyDecision(SECRET, headers, body.replace('flag', 'none'), sentAt)).to.equal(false);
    const later = { ...headers, 'x-moderation-timestamp': String(sentAt + 600) };
    expect(verifyDecision(SECRET, later, body, sentAt + 600)).to.equal(false);
  });

  it('a forged signature of the right length holding a non-ASCII character is refused, not thrown on', async () => {
    const { received } = await deliverOne(SECRET, 3);
    const [{ headers, body }] = received as [Received];
    const signature = String(headers['x-moderation-signature']);
    const forged = { ...headers, 'x-moderation-signature': `${signature.slice(0, -1)}\u00e9` };
    expect(forged['x-moderation-signature']).to.have.lengthOf(signature.length);
    expect(verifyDecision(SECRET, forged, body, Number(headers['x-moderation-timestamp']))).to.equal(false);
  });
});

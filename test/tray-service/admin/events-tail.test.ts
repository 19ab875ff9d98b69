import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { createEventAnnouncer } from '../../../tray-service/admin/event-announcer.ts';
import { signedHeaders } from '../../receiver/support/signed-request.ts';
import { startTestReceiver, type TestReceiver } from '../../receiver/support/use-receiver.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { dataOf, openSse, type SseStream } from '../live/support/sse-client.ts';
import { commentEvent, postEvent } from '../worker/event-builder.ts';
import { useWorker } from '../worker/worker-harness.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

const STREAM_PREFIX = uniqueName('tail');
const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const keyOf = (body: string) => createHash('sha256').update(body).digest('hex');

describe('GET /admin/events/tail (live tail, through the real receiver and worker)', function () {
  this.timeout(30_000);
  let redis: RedisClient | undefined;
  const worker = useWorker({
    // The worker announces each event once applied, as tray-service/main.ts wires it.
    announce: (event) =>
      createEventAnnouncer(redis!, STREAM_PREFIX, createLogger({ name: 'test', level: 'silent' }))(event),
  });
  let receiver: TestReceiver;
  let server: Server;
  let base: string;
  let closeApp: () => void;
  const tails: SseStream[] = [];

  before(async () => {
    redis = createRedis(testStack().redisUrl);
    // The receiver queues on the worker's queue, as both services do on one Redis.
    receiver = await startTestReceiver(worker.prefix);
    const { app, close } = adminApp(worker.storage, { streamPrefix: STREAM_PREFIX });
    closeApp = close;
    server = await listen(app, { port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const tail of tails) tail.close();
    await closeServer(server, 100);
    closeApp();
    await receiver.close();
    rmSync(receiver.spoolDir, { recursive: true, force: true });
    redis?.disconnect();
  });

  const tail = async (query = '') => {
    const stream = await openSse(`${base}/admin/events/tail${query}`, bearer);
    tails.push(stream);
    return stream;
  };
  /** POSTs a signed delivery to the receiver; resolves when it acknowledged (200 {}). */
  const send = async (envelope: { event: string; data: Record<string, unknown> }) => {
    const body = JSON.stringify(envelope);
    await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
    return { key: keyOf(body), ackedAt: performance.now() };
  };

  it('streams a freshly signed webhook within 2 s of its acknowledgement, with its outcome', async () => {
    const stream = await tail();
    expect(stream.status).to.equal(200);
    expect(stream.headers['content-type']).to.match(/^text\/event-stream/);
    const { key, ackedAt } = await send(postEvent({ postId: 'p-tail-1', author: 'u-ana' }));
    const event = await stream.next((e) => e.event === 'stored' && e.id === key, { timeoutMs: 5_000 });
    const lagMs = performance.now() - ackedAt;
    expect(lagMs).to.be.below(2_000);
    const view = dataOf<Record<string, unknown>>(event);
    expect(view).to.include({
      key,
      event: 'post.didCreate',
      status: 'applied',
      userId: 'u-ana',
      communityId: 'c-hike',
    });
    expect(view).to.have.property('appliedAt');
    expect(view).to.have.property('data');
  });

  it('sends only the events that pass its filters', async () => {
    const comments = await tail('?event=comment.didCreate&userId=u-cid');
    // One event failing each filter, then one passing both: announced in this order.
    const post = await send(postEvent({ postId: 'p-tail-2', author: 'u-cid' }));
    const otherUsers = await send(commentEvent({ commentId: 'cm-tail-dee', author: 'u-dee' }));
    const comment = await send(commentEvent({ commentId: 'cm-tail-2', author: 'u-cid' }));
    const got = await comments.next((e) => e.event === 'stored', { timeoutMs: 5_000 });
    expect(got.id).to.equal(comment.key);
    const stored = comments.events.filter((e) => e.event === 'stored').map((e) => e.id);
    expect(stored).to.not.include(post.key);
    expect(stored).to.not.include(otherUsers.key);
  });

  it('does not announce an event again when its job runs again (a redelivery or a replay)', async () => {
    const stream = await tail();
    const envelope = postEvent({ postId: 'p-tail-3' });
    const { key } = await send(envelope);
    await stream.next((e) => e.id === key, { timeoutMs: 5_000 });
    // The same delivery again, as a new job (the receiver's dedupe would not even queue it).
    await worker.deliver(envelope, { jobId: 'again-p-tail-3' });
    const marker = await send(postEvent({ postId: 'p-tail-4' }));
    await stream.next((e) => e.id === marker.key, { timeoutMs: 5_000 });
    expect(stream.events.filter((e) => e.id === key)).to.have.lengthOf(1);
  });

  it('refuses a bad filter with 400 before opening the stream', async () => {
    const stream = await tail('?moderation=maybe');
    expect(stream.status).to.equal(400);
    expect(JSON.parse(await stream.body())).to.include({ code: 400001 });
  });
});

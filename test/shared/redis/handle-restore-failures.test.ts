import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { waitFor } from '../../support/wait-for.ts';

// ioredis subscribes a reconnected connection to its channels again without handling the
// SUBSCRIBE's failure; with Redis refusing the password, that failure was an unhandled rejection
// (which ends a service) carrying the password. createRedis's connections report it as an error
// event instead, and restore their subscriptions once Redis takes the password again.
describe('shared/redis createRedis while Redis refuses the password', function () {
  this.timeout(60_000);
  const password = 'restore-failures-pw';
  let dir: string;
  let server: LocalServer;
  let admin: Redis;
  let subscriber: RedisClient | undefined;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'restore-failures-'));
    server = await startRedis({ dir: join(dir, 'redis'), password });
    admin = new Redis(server.url);
    // Mocha's own listener would fail the run at the first one; this test counts them instead.
    process.prependListener('unhandledRejection', onRejection);
  });
  after(async () => {
    process.off('unhandledRejection', onRejection);
    subscriber?.disconnect();
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports a failed re-SUBSCRIBE as an error event, not an unhandled rejection, and subscribes again later', async () => {
    const client = createRedis(server.url, { maxRetriesPerRequest: null, enableReadyCheck: false });
    subscriber = client;
    const errors: Error[] = [];
    client.on('error', (error: Error) => errors.push(error));
    const received: string[] = [];
    client.on('message', (_channel: string, message: string) => received.push(message));
    await client.subscribe('restore-failures');

    await admin.config('SET', 'requirepass', `${password}-next`);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await waitFor(() => errors.some((error) => error.message.startsWith('WRONGPASS')), 10_000, 'WRONGPASS');
    // Two more reconnects' worth, with the backoff's waits.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(rejections.map(String)).to.deep.equal([]);

    await admin.config('SET', 'requirepass', password);
    await waitFor(
      async () => {
        await admin.publish('restore-failures', 'after');
        return received.includes('after');
      },
      10_000,
      'a message on the restored subscription',
    );
    expect(rejections.map(String)).to.deep.equal([]);
  });

  it('does not subscribe again to a channel the caller left while Redis refused the password', async () => {
    const client = createRedis(server.url, { maxRetriesPerRequest: null, enableReadyCheck: false });
    const errors: Error[] = [];
    client.on('error', (error: Error) => errors.push(error));
    try {
      await client.subscribe('restore-kept', 'restore-left');
      await admin.config('SET', 'requirepass', `${password}-next`);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await waitFor(() => errors.some((error) => error.message.startsWith('WRONGPASS')), 10_000, 'WRONGPASS');
      const left = client.unsubscribe('restore-left');
      await admin.config('SET', 'requirepass', password);
      await left;
      const subscribers = async () =>
        (await admin.call('PUBSUB', 'NUMSUB', 'restore-kept', 'restore-left')) as [
          string,
          number,
          string,
          number,
        ];
      await waitFor(async () => (await subscribers())[1] === 1, 10_000, 'the kept channel subscribed again');
      expect((await subscribers())[3]).to.equal(0);
      expect(rejections.map(String)).to.deep.equal([]);
    } finally {
      client.disconnect();
    }
  });

  it("leaves a caller's own SUBSCRIBE failure to the caller", async () => {
    const client = createRedis(server.url.replace(password, 'not-the-password'), {
      maxRetriesPerRequest: null,
      enableReadyCheck: false,
    });
    client.on('error', () => undefined);
    try {
      const failure = await client.subscribe('restore-failures').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(String(failure)).to.match(/WRONGPASS/);
    } finally {
      client.disconnect();
    }
  });
});

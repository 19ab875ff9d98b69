import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, onSubscriberReplaced, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { watchSubscriber } from '../../../shared/redis/watch-subscriber.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../../support/blackhole-proxy.ts';
import { waitFor } from '../../support/wait-for.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// The subscriber reaches Redis through a proxy that can go silent both ways without closing
// anything: a network cut, which TCP alone notices only after hours.
describe('shared/redis watch-subscriber', function () {
  this.timeout(30_000);
  let dir: string;
  let redis: LocalServer;
  let proxy: BlackholeProxy;
  let subscriber: RedisClient | undefined;
  let publisher: RedisClient | undefined;
  let stop: () => void = () => undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'watch-subscriber-'));
    redis = await startRedis({ dir });
    proxy = await startBlackholeProxy(Number(new URL(redis.url).port));
    publisher = createRedis(redis.url);
  });
  afterEach(async () => {
    stop();
    subscriber?.disconnect();
    publisher?.disconnect();
    await proxy.close();
    await redis.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A subscriber of `channel` through the proxy, with the messages it got and its replacements. */
  const subscribe = async (channel: string) => {
    subscriber = createRedis(`redis://127.0.0.1:${proxy.port}`);
    subscriber.on('error', () => undefined);
    const messages: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => messages.push(message));
    await subscriber.subscribe(channel);
    let replaced = 0;
    onSubscriberReplaced(subscriber, () => (replaced += 1));
    return { messages, replaced: () => replaced };
  };
  const subscribed = async (channel: string) =>
    Number(((await publisher!.pubsub('NUMSUB', channel)) as [string, number])[1]);

  it('connects again once the connection stops answering, subscribed again, and says the subscriber was replaced', async () => {
    const { messages, replaced } = await subscribe('watched');
    stop = watchSubscriber(subscriber!, { intervalMs: 200, timeoutMs: 500, logger: silent });
    await publisher!.publish('watched', 'before');
    await waitFor(() => messages.includes('before'), 5_000, 'the first message');
    proxy.blackhole();
    await publisher!.publish('watched', 'into the void');
    await waitFor(() => replaced() === 1, 10_000, 'the subscriber replaced');
    await waitFor(async () => (await subscribed('watched')) >= 1, 5_000, 'the channel subscribed again');
    await publisher!.publish('watched', 'after');
    await waitFor(() => messages.includes('after'), 5_000, 'a message after');
    expect(messages).to.deep.equal(['before', 'after']);
  });

  it('leaves a connection that answers alone', async () => {
    const { replaced } = await subscribe('quiet');
    // A timeout no stall of this process's event loop reaches (its PINGs' answers wait behind one),
    // over several of them.
    stop = watchSubscriber(subscriber!, { intervalMs: 100, timeoutMs: 1_500, logger: silent });
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(replaced()).to.equal(0);
    expect(subscriber!.status).to.equal('ready');
  });

  it('without it, a connection gone silent stays ready and gets nothing', async () => {
    const { messages, replaced } = await subscribe('unwatched');
    proxy.blackhole();
    await publisher!.publish('unwatched', 'lost');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(subscriber!.status).to.equal('ready');
    expect(replaced()).to.equal(0);
    expect(messages).to.deep.equal([]);
  });
});

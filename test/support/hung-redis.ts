import { createRedis, type RedisClient } from '../../shared/redis/create-redis.ts';
import { startBlackholeProxy, type BlackholeProxy } from './blackhole-proxy.ts';
import { testStack } from './test-stack.ts';

/** A connection to the test Redis through a proxy each case can make hang (`hang()`). */
export interface HungRedis {
  readonly redis: RedisClient;
  /** The connection stays open and nothing more is answered, as with a stopped server. */
  hang(): void;
  /** Commands still reach the server and run; their answers are lost on the way back. */
  loseReplies(): void;
}

/** Per case: a fresh proxy and connection, answering until the case calls hang(). */
export function useHungRedis(): () => HungRedis {
  let proxy: BlackholeProxy | undefined;
  let redis: RedisClient | undefined;
  beforeEach(async () => {
    proxy = await startBlackholeProxy(Number(new URL(testStack().redisUrl).port));
    redis = createRedis(`redis://127.0.0.1:${proxy.port}`);
    redis.on('error', () => undefined);
    await redis.ping();
  });
  afterEach(async () => {
    redis?.disconnect();
    await proxy?.close();
  });
  return () => {
    if (!proxy || !redis) throw new Error('useHungRedis: used outside a case');
    const { blackhole, loseReplies } = proxy;
    return { redis, hang: () => blackhole(), loseReplies: () => loseReplies() };
  };
}

/** How `call` failed, and after how long; throws if it answers. */
export async function failureOf(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await call;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('answered, though Redis hangs');
}

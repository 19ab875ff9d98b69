import { Redis } from 'ioredis';

/**
 * `connect(url)`: a client on a test's own redis-server that fails fast, retries every 100 ms and
 * ignores its errors (servers are stopped or reconfigured on purpose), disconnected after the
 * enclosing describe. Call inside a describe.
 */
export function useRedisClients(): {
  connect: (url: string, options?: { username?: string; password?: string }) => Redis;
} {
  const clients: Redis[] = [];
  after(() => {
    for (const client of clients.splice(0)) client.disconnect();
  });
  return {
    connect(url, options = {}) {
      const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 100, ...options });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
  };
}

import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { dropConnection } from '../../../shared/redis/drop-connection.ts';
import { socketOf } from '../../../shared/redis/redis-socket.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('shared/redis drop-connection', function () {
  this.timeout(30_000);
  let dir: string;
  let redis: LocalServer;
  let client: RedisClient | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drop-connection-'));
    redis = await startRedis({ dir });
  });
  afterEach(async () => {
    redis.process.kill('SIGCONT');
    client?.disconnect();
    await redis.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails the commands a hung server holds at once, then connects again and works once the server answers', async () => {
    // The receiver's rules: no offline queue, one try per command.
    client = createRedis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    await waitFor(() => client?.status === 'ready', 5_000, 'the first connection');
    redis.process.kill('SIGSTOP');
    const waiting = [1, 2, 3].map((n) =>
      client!.set(`drop-${n}`, 'v').then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    dropConnection(client);
    expect(await Promise.all(waiting)).to.deep.equal(Array(3).fill('Connection is closed.'));
    expect(performance.now() - started, 'ms until the waiting commands failed').to.be.below(1_000);
    redis.process.kill('SIGCONT');
    await waitFor(() => client?.status === 'ready', 10_000, 'the connection made again');
    expect(await client.ping()).to.equal('PONG');
  });

  // The connection closed by itself just before the drop (a hung Redis killed, a proxy closing it):
  // ioredis waits to connect again, and its disconnect() then cancelled that wait and emitted no
  // 'end', so nothing ever connected again and the receiver spooled every event until a restart.
  it('leaves a client that is about to connect again to do so, and it works again', async () => {
    client = createRedis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    await waitFor(() => client?.status === 'ready', 5_000, 'the first connection');
    const reconnecting = new Promise((resolve) => client!.once('reconnecting', resolve));
    // A single server's client (createRedis gives a Cluster only for a cluster's nodes).
    socketOf(client as Redis)!.destroy();
    await reconnecting;
    expect(client.status).to.equal('reconnecting');
    dropConnection(client);
    await waitFor(() => client?.status === 'ready', 5_000, 'the connection made again');
    expect(await client.ping()).to.equal('PONG');
  });
});

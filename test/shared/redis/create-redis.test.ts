import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import {
  createRedis,
  onSubscriberReplaced,
  SLOTS_REFRESH_INTERVAL_MS,
  type RedisClient,
} from '../../../shared/redis/create-redis.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';
import { waitFor } from '../../support/wait-for.ts';

/** What the test watches of ioredis's Cluster (5.x): its periodic slot-map refresh. */
interface RefreshInternals {
  refreshSlotsCache: (callback?: (error?: Error) => void) => void;
  isRefreshing: boolean;
  slotsTimer: NodeJS.Timeout | null;
}

describe('shared/redis createRedis on a cluster', function () {
  this.timeout(60_000);
  const local = useRedisCluster('create-redis', { masters: 3, replicasPerMaster: 0 });

  // ioredis re-arms the refresh timer from the refresh's own callback: a client quit while a
  // periodic refresh was in flight kept reading the slot map every 2 s, and kept its process alive.
  it('stops refreshing the slot map once quit, also when a refresh was in flight', async () => {
    const client = createRedis(local.target);
    await client.ping();
    const internals = client as unknown as RefreshInternals;
    const refresh = internals.refreshSlotsCache.bind(client);
    let refreshes = 0;
    let quitting: Promise<unknown> | undefined;
    internals.refreshSlotsCache = (callback) => {
      refreshes += 1;
      refresh(callback);
      // The first periodic refresh: the application shuts down while it is in flight.
      quitting ??= client.quit();
    };
    await waitFor(() => quitting !== undefined, 3 * SLOTS_REFRESH_INTERVAL_MS, 'a periodic refresh');
    await quitting;
    await waitFor(() => client.status === 'end' && !internals.isRefreshing, 5_000, 'the refresh to end');
    expect(internals.slotsTimer, 'a refresh timer left armed').to.equal(null);
    const seen = refreshes;
    await new Promise((resolve) => setTimeout(resolve, SLOTS_REFRESH_INTERVAL_MS + 500));
    expect(refreshes, 'refreshes after quit').to.equal(seen);
  });
});

describe('shared/redis createRedis on a server demoted to a replica', function () {
  this.timeout(30_000);
  let dir: string;
  let primary: LocalServer;
  let demoted: LocalServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'demoted-redis-'));
    [primary, demoted] = await Promise.all([
      startRedis({ dir: join(dir, 'primary') }),
      startRedis({ dir: join(dir, 'demoted') }),
    ]);
  });
  after(async () => {
    await Promise.all([primary.stop(), demoted.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  // Behind one address a failover leaves the connection on the old primary: it must connect again,
  // so it reaches whichever server the address names now, instead of failing every write for good.
  for (const [kind, rules] of [
    ['a fail-fast connection', {}],
    ["the receiver's connection (no offline queue)", { enableOfflineQueue: false }],
    ["bull's blocking connection", { maxRetriesPerRequest: null, enableReadyCheck: false }],
  ] as const) {
    it(`${kind} connects again after a write is refused with READONLY`, async () => {
      const client = createRedis(demoted.url, rules);
      const admin = new Redis(demoted.url);
      try {
        client.on('error', () => undefined);
        await waitFor(() => client.status === 'ready', 5_000, 'the connection');
        const before = await client.client('ID');
        await admin.call('REPLICAOF', '127.0.0.1', String(new URL(primary.url).port));
        await expect(client.set('demoted-key', '1')).to.be.rejectedWith(/^READONLY/);
        await waitFor(() => client.status === 'ready', 5_000, 'the connection to come back');
        await waitFor(
          async () => (await client.client('ID').catch(() => before)) !== before,
          5_000,
          'a new connection',
        );
      } finally {
        await admin.call('REPLICAOF', 'NO', 'ONE');
        admin.disconnect();
        client.disconnect();
      }
    });
  }
});

// At start-up the subscriber may not reach Redis yet: a SUBSCRIBE sent then fails after two
// connects (maxRetriesPerRequest), and ioredis restores only what Redis confirmed. Its first
// `ready` used to count for nothing, so the streams waiting on that subscription got no change.
describe('shared/redis onSubscriberReplaced before the first connection', function () {
  this.timeout(30_000);
  let dir = '';
  let server: LocalServer | undefined;
  let subscriber: RedisClient | undefined;
  after(async () => {
    subscriber?.disconnect();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says the subscriber was replaced at its first ready too, after a SUBSCRIBE failed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'first-ready-'));
    const port = await freePort();
    subscriber = createRedis(`redis://127.0.0.1:${port}`, { retryStrategy: () => 200 });
    subscriber.on('error', () => undefined);
    let replaced = 0;
    onSubscriberReplaced(subscriber, () => (replaced += 1));
    const failed = await subscriber.subscribe('changes').then(
      () => false,
      () => true,
    );
    expect(failed, 'the SUBSCRIBE failed while nothing listened').to.equal(true);
    server = await startRedis({ dir, port });
    await waitFor(() => replaced === 1, 10_000, 'the first ready told');
    expect(subscriber.status).to.equal('ready');
  });
});

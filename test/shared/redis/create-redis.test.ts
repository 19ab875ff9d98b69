import { expect } from 'chai';
import { createRedis, SLOTS_REFRESH_INTERVAL_MS } from '../../../shared/redis/create-redis.ts';
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

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { dropConnection } from '../../../shared/redis/drop-connection.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import type { LiveChange } from '../../../tray-service/live/live-change.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../../support/blackhole-proxy.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { waitFor } from '../../support/wait-for.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A managed Redis fails over behind one address: the old primary becomes a replica of the new one,
// and a connection made before stays on it. Writes there are refused (READONLY, which drops the
// connection), but PUBLISH is answered, and a replica passes nothing on to its primary: a
// publisher whose connection wrote nothing else (a worker-only process) announced every change to
// nobody, silently, for as long as it lived. The streams, on the new primary, got no change.
describe('live changes published across a failover behind one address', function () {
  this.timeout(30_000);
  let dir: string;
  let first: LocalServer;
  let second: LocalServer;
  let proxy: BlackholeProxy;
  let admin: { first: Redis; second: Redis };
  let publisherRedis: RedisClient;
  let listener: Redis;
  const heard: LiveChange[] = [];
  const prefix = uniqueName('failover-live');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'failover-live-'));
    [first, second] = await Promise.all([
      startRedis({ dir: join(dir, 'first') }),
      startRedis({ dir: join(dir, 'second') }),
    ]);
    admin = { first: new Redis(first.url), second: new Redis(second.url) };
    // The second replicates the first: what is published on the first reaches its subscribers.
    await admin.second.call('REPLICAOF', '127.0.0.1', String(new URL(first.url).port));
    await waitFor(
      async () => /master_link_status:up/.test(await admin.second.info('replication')),
      10_000,
      'the replica to follow',
    );
    proxy = await startBlackholeProxy(Number(new URL(first.url).port));
    publisherRedis = createRedis(`redis://127.0.0.1:${proxy.port}`);
    publisherRedis.on('error', () => undefined);
    // The streams' side: subscribed on the server that will be the primary.
    listener = new Redis(second.url);
    await listener.psubscribe(`${prefix}:changes:*`);
    listener.on('pmessage', (_pattern, _channel, message) =>
      heard.push(...(JSON.parse(message) as LiveChange[])),
    );
  });
  after(async () => {
    listener?.disconnect();
    publisherRedis?.disconnect();
    admin?.first.disconnect();
    admin?.second.disconnect();
    await proxy?.close();
    await Promise.all([first?.stop(), second?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes up for what went to the demoted primary: its users are resynced on the new one', async () => {
    const publisher = createChangePublisher(publisherRedis, prefix, silent, { retryMs: 100 });
    await publisher.cleared('u-before', Date.now());
    await waitFor(() => heard.some((change) => change.userId === 'u-before'), 5_000, 'the change before');

    // The failover: the second is the primary now, the first its replica, and the address names
    // the second for every connection made from now on.
    await admin.second.call('REPLICAOF', 'NO', 'ONE');
    await admin.first.call('REPLICAOF', '127.0.0.1', String(new URL(second.url).port));
    proxy.retarget(Number(new URL(second.url).port));
    await waitFor(
      async () => /master_link_status:up/.test(await admin.first.info('replication')),
      10_000,
      'the old primary to follow the new one',
    );

    const at = Date.now();
    await publisher.cleared('u-after', at);
    await waitFor(
      () => heard.some((change) => change.userId === 'u-after'),
      10_000,
      'the change published on the demoted primary, or its resync, on the new primary',
    );
    const told = heard.find((change) => change.userId === 'u-after')!;
    expect(told.kind).to.equal('resync');
    // Later changes reach the new primary directly.
    await publisher.cleared('u-later', Date.now());
    await waitFor(
      () => heard.some((change) => change.userId === 'u-later' && change.kind === 'cleared'),
      5_000,
      'a later change',
    );
  });

  it('resyncs what a connection published before it was replaced, which no later write confirms', async () => {
    const publisher = createChangePublisher(publisherRedis, prefix, silent, { retryMs: 100 });
    await publisher.cleared('u-dropped', Date.now());
    // Within the confirmation's second: the next write goes out on another connection.
    dropConnection(publisherRedis);
    await waitFor(
      () => heard.some((change) => change.userId === 'u-dropped' && change.kind === 'resync'),
      10_000,
      'the resync of a change whose connection was replaced',
    );
  });
});

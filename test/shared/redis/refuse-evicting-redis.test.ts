import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSpool } from '../../../receiver/spool/open-spool.ts';
import { encodeWebhookJob } from '../../../shared/queue/webhook-queue.ts';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { evictionProblem, refuseEvictingRedis } from '../../../shared/redis/refuse-evicting-redis.ts';
import { useRedisClients } from '../../support/use-redis-clients.ts';
import { cleanEnv, runScript } from '../../support/run-script.ts';
import { runServiceOnRedis } from '../../support/run-service-on-redis.ts';

const fix = 'CONFIG SET maxmemory-policy noeviction';

describe('evictionProblem', () => {
  it('accepts noeviction', () => {
    expect(evictionProblem('# Memory\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n')).to.equal(undefined);
  });
  for (const policy of ['allkeys-lru', 'volatile-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-ttl']) {
    it(`refuses ${policy} in one line naming the policy and the fix`, () => {
      const message = evictionProblem(`# Memory\r\nmaxmemory_policy:${policy}\r\nother:1\r\n`);
      expect(message).to.include(`"${policy}"`).and.to.include(fix);
      expect(message).not.to.include('\n');
    });
  }
  it('has nothing to say when the policy is not reported', () => {
    expect(evictionProblem('# Memory\r\nused_memory:1\r\n')).to.equal(undefined);
  });
});

describe('refuseEvictingRedis against a real redis-server', function () {
  this.timeout(30_000);
  let dir: string;
  let lru: LocalServer;
  let safe: LocalServer;
  const { connect } = useRedisClients();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evicting-redis-'));
    [lru, safe] = await Promise.all([
      startRedis({ dir: join(dir, 'lru'), maxmemoryPolicy: 'allkeys-lru' }),
      startRedis({ dir: join(dir, 'safe') }),
    ]);
  });
  after(async () => {
    await Promise.all([lru.stop(), safe.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a server started with --maxmemory-policy allkeys-lru before start-up goes on', async () => {
    const messages: string[] = [];
    await refuseEvictingRedis(connect(lru.url), { onRefused: (message) => messages.push(message) });
    expect(messages).to.have.lengthOf(1);
    expect(messages[0]).to.include('"allkeys-lru"').and.to.include(fix);
  });

  it('accepts a noeviction server, and refuses once it reconnects after a switch to volatile-lru', async () => {
    const messages: string[] = [];
    const admin = connect(safe.url);
    const client = connect(safe.url);
    await refuseEvictingRedis(client, { onRefused: (message) => messages.push(message) });
    expect(messages).to.deep.equal([]);
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const reconnected = new Promise((resolve) => client.once('ready', resolve));
    await admin.client('KILL', 'ID', String(await client.client('ID')));
    await reconnected;
    // The check runs on 'ready'; give its INFO a bounded number of round trips.
    for (let n = 0; n < 100 && messages.length === 0; n += 1) await new Promise((r) => setTimeout(r, 20));
    expect(messages).to.have.lengthOf(1);
    expect(messages[0]).to.include('"volatile-lru"');
  });

  for (const script of ['receiver/main.ts', 'tray-service/main.ts']) {
    describe(`${script} pointed at it`, () => {
      it('stops start-up with code 1 and one line naming the policy and the fix', async () => {
        const result = await runServiceOnRedis(script, lru.url, dir);
        expect(result.code, result.stderr).to.equal(1);
        expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
        expect(result.stderr).to.include('"allkeys-lru"').and.to.include(fix);
      });
    });
  }

  // The spool's events must not go into a Redis the process then refuses: it could evict them.
  it('receiver/main.ts leaves its spooled events on disk, none queued into it', async () => {
    const spoolDir = join(dir, 'spool-kept');
    const earlier = await openSpool(spoolDir);
    await earlier.append(
      encodeWebhookJob({
        dedupeKey: 'kept-on-disk',
        webhook: 'default',
        receivedAt: '2026-11-21T00:00:00.000Z',
        event: 'post.didCreate',
        data: {},
      }),
    );
    await earlier.close();
    const result = await runScript(
      'receiver/main.ts',
      [],
      cleanEnv({
        REDIS_URL: lru.url,
        WEBHOOK_SECRETS: 'eviction-test-secret',
        SPOOL_DIR: spoolDir,
        RECEIVER_PORT: String(await freePort()),
        LOG_LEVEL: 'silent',
      }),
    );
    expect(result.code, result.stderr).to.equal(1);
    expect(await connect(lru.url).keys('*')).to.deep.equal([]);
    const after = await openSpool(spoolDir);
    expect(after.depth()).to.equal(1);
    await after.close();
  });
});

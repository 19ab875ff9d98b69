import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runServiceOnRedis } from '../../support/run-service-on-redis.ts';
import { refuseMissingDatabase } from '../../../shared/redis/refuse-missing-database.ts';
import { useRedisClients } from '../../support/use-redis-clients.ts';
import { testStack } from '../../support/test-stack.ts';

const database = (n: number) => {
  const url = new URL(testStack().redisUrl);
  url.pathname = `/${n}`;
  return url.href;
};

// ioredis selects the URL's database when it connects, and when the server refuses (a managed
// Redis with database 0 only, or a number past `databases`) it only emits an error and goes on,
// on database 0: two deployments kept apart by their database numbers shared every key.
describe('refuseMissingDatabase against a real redis-server (16 databases)', function () {
  this.timeout(30_000);
  const { connect } = useRedisClients();

  it('refuses a REDIS_URL naming a database the server does not have, in one line', async () => {
    const messages: string[] = [];
    const client = connect(database(16));
    client.on('error', () => undefined);
    await refuseMissingDatabase(client, { onRefused: (message) => messages.push(message) });
    expect(messages).to.have.lengthOf(1);
    expect(messages[0]).to.include('REDIS_URL names database 16').and.to.include('DB index is out of range');
    expect(messages[0]).not.to.include('\n');
  });

  it('accepts one it has, and commands reach it', async () => {
    const messages: string[] = [];
    const client = connect(database(7));
    await refuseMissingDatabase(client, { onRefused: (message) => messages.push(message) });
    expect(messages).to.deep.equal([]);
    await client.set('refuse-missing-database', 'here', 'EX', 60);
    const other = connect(database(7));
    expect(await other.get('refuse-missing-database')).to.equal('here');
  });

  for (const script of ['receiver/main.ts', 'tray-service/main.ts']) {
    it(`${script} pointed at it stops start-up with code 1 and one line naming the database`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'missing-database-'));
      try {
        const result = await runServiceOnRedis(script, database(16), dir);
        expect(result.code, result.stderr).to.equal(1);
        expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
        expect(result.stderr).to.include('REDIS_URL names database 16');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('has nothing to check for database 0', async () => {
    const messages: string[] = [];
    await refuseMissingDatabase(connect(database(0)), { onRefused: (message) => messages.push(message) });
    expect(messages).to.deep.equal([]);
  });
});

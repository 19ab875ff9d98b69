import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { freePort, startRedis } from '../../../scripts/lib/local-servers.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import {
  describeRedisFailure,
  isRedisAuthError,
  isRedisUnavailable,
  redisErrorCode,
} from '../../../shared/redis/redis-failure.ts';
import { testStack } from '../../support/test-stack.ts';

describe('shared/redis redis-failure', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
  // What ioredis hands over for a wrong password: the AUTH command, password included, rides along.
  const wrongPass = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
    name: 'ReplyError',
    command: { name: 'auth', args: ['hunter2'] },
  });

  it('takes the socket code, or the first word of a Redis error', () => {
    expect(redisErrorCode(refused)).to.equal('ECONNREFUSED');
    expect(redisErrorCode(wrongPass)).to.equal('WRONGPASS');
    expect(redisErrorCode(new Error('NOAUTH Authentication required.'))).to.equal('NOAUTH');
    expect(redisErrorCode(new Error('something else'))).to.equal('something else');
  });

  it('tells a refused password from an unreachable server', () => {
    expect(isRedisAuthError(wrongPass)).to.equal(true);
    expect(isRedisAuthError(refused)).to.equal(false);
  });

  it('knows the refusal of a Redis older than 6 too (ERR invalid password)', () => {
    expect(isRedisAuthError(new Error('ERR invalid password'))).to.equal(true);
    expect(isRedisAuthError(new Error('ERR unknown command'))).to.equal(false);
  });

  it('names host and port, never the password of the URL or of the AUTH command', () => {
    const target = 'redis://:hunter2@redis.internal:6380';
    expect(describeRedisFailure(target, refused)).to.equal(
      'cannot reach Redis at redis.internal:6380: ECONNREFUSED',
    );
    expect(describeRedisFailure(target, wrongPass)).to.equal(
      'Redis at redis.internal:6380 did not accept the credentials: WRONGPASS',
    );
  });

  /** What a command on `client` rejects with. */
  const failureOf = async (command: () => Promise<unknown>): Promise<unknown> => {
    try {
      await command();
    } catch (error) {
      return error;
    }
    throw new Error('the command succeeded');
  };

  it('tells Redis unreachable (try again) from a command Redis refused (a bug)', async () => {
    const nobody = createRedis(`redis://127.0.0.1:${await freePort()}`);
    nobody.on('error', () => undefined);
    const live = createRedis(testStack().redisUrl);
    try {
      // Nothing listens there: ioredis gives up after its retries.
      expect(isRedisUnavailable(await failureOf(() => nobody.get('k')))).to.equal(true);
      await live.set('redis-failure:string', 'x');
      expect(isRedisUnavailable(await failureOf(() => live.hget('redis-failure:string', 'f')))).to.equal(
        false,
      );
      expect(isRedisUnavailable(await failureOf(() => live.call('NO-SUCH-COMMAND')))).to.equal(false);
      expect(isRedisUnavailable(new Error('something else'))).to.equal(false);
      expect(isRedisUnavailable('Connection is closed.')).to.equal(false);
    } finally {
      nobody.disconnect();
      live.disconnect();
    }
  });

  // A Redis full under the required noeviction policy (a worker outage grows the queue), or a
  // primary demoted by a failover, refuses writes for now: a ticket, a stream slot or an admin
  // session then answered 500 and was logged as a bug, not 503 with Retry-After.
  it('takes a write refused for now (OOM, READONLY) for Redis unavailable', async function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'redis-refusing-'));
    const [full, replica] = await Promise.all([
      startRedis({ dir: join(dir, 'full') }),
      startRedis({ dir: join(dir, 'replica') }),
    ]);
    const admin = new Redis(full.url);
    const toReplica = new Redis(replica.url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      const oom = await failureOf(() => admin.set('redis-failure:full', 'x'));
      expect(String(oom)).to.match(/OOM/);
      expect(isRedisUnavailable(oom)).to.equal(true);
      await toReplica.call('REPLICAOF', '127.0.0.1', String(new URL(full.url).port));
      const readonly = await failureOf(() => toReplica.set('redis-failure:replica', 'x'));
      expect(String(readonly)).to.match(/READONLY/);
      expect(isRedisUnavailable(readonly)).to.equal(true);
    } finally {
      admin.disconnect();
      toReplica.disconnect();
      await Promise.all([full.stop(), replica.stop()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { expect } from 'chai';
import type pg from 'pg';
import { lockKeys, MAX_ADVISORY_LOCKS } from '../../../../tray-service/storage/postgres/lock-keys.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

/**
 * More keys than the test server's lock table holds (max_locks_per_transaction 64 x 300
 * connections): one advisory lock per key ran out of shared memory.
 */
const MANY = 40_000;

const keys = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe('storage/postgres lockKeys', () => {
  const postgres = usePostgres();
  const open: pg.PoolClient[] = [];

  /** A connection in a transaction of its own, rolled back after the test. */
  async function transaction(): Promise<pg.PoolClient> {
    const client = await postgres.pool.connect();
    open.push(client);
    await client.query('BEGIN');
    return client;
  }

  afterEach(async () => {
    for (const client of open.splice(0)) {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  /** Runs `work` in a transaction of its own on a connection of its own, then rolls it back. */
  async function rolledBack<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await postgres.pool.connect();
    try {
      await client.query('BEGIN');
      return await work(client);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  /** Whether `lock` is granted to another transaction without waiting (it gives up after 200 ms). */
  const grantedBeside = (lock: (client: pg.PoolClient) => Promise<void>) =>
    rolledBack(async (client) => {
      await client.query("SET LOCAL lock_timeout = '200ms'");
      try {
        await lock(client);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === '55P03') return false;
        throw error;
      }
    });

  const advisoryLocksHeld = async (client: pg.PoolClient) =>
    Number(
      (
        await client.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
        )
      ).rows[0]?.n,
    );

  it(`takes at most ${MAX_ADVISORY_LOCKS} advisory locks in one transaction however many keys it locks (${MANY} here, exclusive and shared)`, async function () {
    this.timeout(60_000);
    const client = await transaction();
    await lockKeys(client, keys('x', MANY), keys('s', MANY));
    expect(await advisoryLocksHeld(client)).to.be.within(1, MAX_ADVISORY_LOCKS);
  });

  it('keeps a key locked by a transaction of many keys from every other writer of it, and from readers when exclusive', async () => {
    const many = keys('m', 5_000);
    const holder = await transaction();
    await lockKeys(holder, many.slice(0, 2_500), many.slice(2_500));
    expect(await grantedBeside((client) => lockKeys(client, ['m-7']))).to.equal(false);
    expect(await grantedBeside((client) => lockKeys(client, [], ['m-7']))).to.equal(false);
    expect(await grantedBeside((client) => lockKeys(client, ['m-4000']))).to.equal(false);
  });

  it('lets writers of a few keys wait only on the same key: shared beside shared, never beside exclusive, apart keys never', async () => {
    // Two keys whose coarse lock is the same one (what a transaction of many keys would take for both).
    const bucketOf = (key: string) =>
      rolledBack(async (client) => {
        await lockKeys(client, [key]);
        const found = await client.query<{ bucket: string }>(
          `SELECT objid AS bucket FROM pg_locks
           WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND objsubid = 2`,
        );
        return found.rows.map((row) => row.bucket).join();
      });
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    for (const key of keys('b', 2_000)) {
      const bucket = await bucketOf(key);
      const before = seen.get(bucket);
      if (before !== undefined) {
        pair = [before, key];
        break;
      }
      seen.set(bucket, key);
    }
    if (!pair) throw new Error('no two keys share a bucket');
    const [first, second] = pair;

    const holder = await transaction();
    await lockKeys(holder, [first], ['shared-key']);
    expect(await grantedBeside((client) => lockKeys(client, [second]))).to.equal(true);
    expect(await grantedBeside((client) => lockKeys(client, [], ['shared-key']))).to.equal(true);
    expect(await grantedBeside((client) => lockKeys(client, ['shared-key']))).to.equal(false);
    expect(await grantedBeside((client) => lockKeys(client, [], [first]))).to.equal(false);
  });
});

import { expect } from 'chai';
import { connectPostgres } from '../../../../tray-service/storage/postgres/connect-postgres.ts';
import { inTransaction } from '../../../../tray-service/storage/postgres/in-transaction.ts';
import { useStoppablePostgres } from '../../../support/use-stoppable-postgres.ts';

describe('inTransaction when the server ends the connection mid-transaction', () => {
  const postgres = useStoppablePostgres();

  it('rejects that transaction (no uncaught error ending the process), and the pool serves again once the server is back', async function () {
    this.timeout(60_000);
    const pool = connectPostgres(postgres.url, {
      poolSize: 2,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const outcome = inTransaction(pool, async (client) => {
        await client.query('SELECT 1');
        // A fast shutdown while this connection is checked out and between statements: the
        // server's termination notice arrives with no statement in flight to carry it.
        await postgres.stop();
        await client.query('SELECT 1');
      });
      await expect(outcome).to.be.rejected;
      await postgres.start();
      const back = await inTransaction(pool, (client) => client.query<{ n: number }>('SELECT 2 AS n'));
      expect(back.rows[0]?.n).to.equal(2);
    } finally {
      await pool.end();
    }
  });
});

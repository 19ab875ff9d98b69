import { expect } from 'chai';
import { connectPostgres } from '../../../../tray-service/storage/postgres/connect-postgres.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

describe('connectPostgres', () => {
  const postgres = usePostgres();

  it('runs statements without JIT compilation, even those the planner costs above jit_above_cost', async () => {
    const pool = connectPostgres(postgres.url, {
      poolSize: 2,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const client = await pool.connect();
      let rows: { 'QUERY PLAN': [Record<string, unknown>] }[];
      try {
        // A statement the planner overestimates, like the fan-out upsert whose mute lookup it
        // costs above the threshold: a cross join of an empty table it has no statistics of.
        // With JIT on, the server compiles such a statement on every execution (measured:
        // 180-240 ms of LLVM emission for a 6 ms upsert).
        await client.query('CREATE TEMPORARY TABLE never_analyzed (x int)');
        ({ rows } = await client.query<{ 'QUERY PLAN': [Record<string, unknown>] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON)
           SELECT a.x + b.x + c.x FROM never_analyzed a, never_analyzed b, never_analyzed c`,
        ));
      } finally {
        client.release();
      }
      const plan = rows[0]?.['QUERY PLAN'][0] ?? {};
      const cost = (plan.Plan as { 'Total Cost': number })['Total Cost'];
      const { rows: threshold } = await pool.query<{ jit_above_cost: string }>('SHOW jit_above_cost');
      expect(cost, 'the statement is costed above the JIT threshold').to.be.above(
        Number(threshold[0]?.jit_above_cost),
      );
      expect(plan, 'the plan shows no JIT compilation').not.to.have.property('JIT');
    } finally {
      await pool.end();
    }
  });
});

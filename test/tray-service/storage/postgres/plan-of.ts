import type pg from 'pg';
import type { SqlQuery } from '../../../../tray-service/storage/postgres/sql-conditions.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

export interface QueryPlan {
  /** Every node type of the plan, outermost first. */
  nodes: string[];
  /** The indexes the plan reads. */
  indexes: string[];
}

/**
 * The plan PostgreSQL makes for `query` when it would rather not scan a table or sort: on the
 * tests' small tables the planner prefers a sequential scan, so the question asked is whether an
 * index CAN serve the filter and the order, not which plan wins on a handful of rows.
 */
export async function planOf(pool: pg.Pool, query: SqlQuery): Promise<QueryPlan> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    await client.query('SET LOCAL enable_bitmapscan = off');
    await client.query('SET LOCAL enable_sort = off');
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${query.text}`,
      query.values,
    );
    const plan: QueryPlan = { nodes: [], indexes: [] };
    const walk = (node: PlanNode) => {
      plan.nodes.push(node['Node Type']);
      if (node['Index Name']) plan.indexes.push(node['Index Name']);
      for (const child of node.Plans ?? []) walk(child);
    };
    const root = rows[0]?.['QUERY PLAN'][0].Plan;
    if (root) walk(root);
    return plan;
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

import type pg from 'pg';
import type { SqlQuery } from '../../../../tray-service/storage/postgres/sql-conditions.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

export interface QueryPlan {
  /** Every node type of the plan, outermost first. */
  nodes: string[];
  /** The indexes the plan reads. */
  indexes: string[];
  /** Each node that reads an index, with the index: which of them is an index scan. */
  indexScans: { node: string; index: string }[];
  /** The tables a node reads whole: a sequential scan, or an index read without a condition. */
  readWhole: string[];
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
    const plan: QueryPlan = { nodes: [], indexes: [], indexScans: [], readWhole: [] };
    const walk = (node: PlanNode) => {
      plan.nodes.push(node['Node Type']);
      const table = node['Relation Name'];
      if (table && (node['Node Type'] === 'Seq Scan' || (node['Index Name'] && !node['Index Cond'])))
        plan.readWhole.push(table);
      if (node['Index Name']) {
        plan.indexes.push(node['Index Name']);
        plan.indexScans.push({ node: node['Node Type'], index: node['Index Name'] });
      }
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

/**
 * A pool that runs each statement on `pool` and keeps it: the statements a function sends, whose
 * plans a test then reads (planOf), rather than copies of their text that could drift.
 */
export function recordingPool(pool: pg.Pool): { pool: pg.Pool; statements: SqlQuery[] } {
  const statements: SqlQuery[] = [];
  const recording = {
    query: (text: string, values: unknown[] = []) => {
      statements.push({ text, values });
      return pool.query(text, values);
    },
  };
  // Only query(text, values) is recorded: what the purges and the marks of every record call.
  return { pool: recording as unknown as pg.Pool, statements };
}

import type pg from 'pg';
import type { PlainStatement } from './bench-api-plain.ts';

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each statement, its plan's lines indented under its name: which
 * index serves it, how many rows and buffers it touched, and where its time went.
 */
export async function explainStatements(
  sql: Pick<pg.Pool, 'query'>,
  statements: readonly { name: string; statement: PlainStatement }[],
): Promise<string[]> {
  const lines: string[] = [];
  for (const { name, statement } of statements) {
    const plan = await sql.query<{ 'QUERY PLAN': string }>({
      text: `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
      values: statement.values,
    });
    lines.push(`${name}:`, ...plan.rows.map((row) => `    ${row['QUERY PLAN']}`));
  }
  return lines;
}

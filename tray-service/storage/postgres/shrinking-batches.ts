/** PostgreSQL's query_canceled, as statement_timeout raises it. */
const isStatementTimeout = (error: unknown) => (error as { code?: unknown } | null)?.code === '57014';

/**
 * Batches that must pass at a shrunk size before it grows ten times again; twice as many each
 * time a grown batch times out once more (a long run of slow rows), up to MAX_GROW_AFTER, so the
 * ordinary rows after such a run are not purged ten at a time for long.
 */
const GROW_AFTER = 10;
const MAX_GROW_AFTER = 100;

/**
 * Runs `runBatch` over a table's expired rows, `fullBatch` at a time, until a batch reads fewer
 * than it asked for; returns how many rows went. A batch that outlasts the statement timeout is
 * tried again ten times smaller, down to one row: the next purge would read the same oldest rows
 * first, so a batch too slow together (large events' payloads to free, rows whose keep checks are
 * slow) would leave the table never purged again. After GROW_AFTER batches pass at a shrunk size
 * it grows ten times again, up to `fullBatch`: the slow rows are often a few among a backlog of
 * ordinary ones, which batches of ten would take a hundred times the statements to purge. A row
 * alone that outlasts the timeout still fails the purge.
 */
export async function inShrinkingBatches(
  fullBatch: number,
  runBatch: (batch: number) => Promise<{ read: number; gone: number }>,
): Promise<number> {
  let purged = 0;
  let batch = fullBatch;
  let passed = 0;
  let growAfter = GROW_AFTER;
  let grown = false;
  for (;;) {
    let counts: { read: number; gone: number };
    try {
      counts = await runBatch(batch);
    } catch (error) {
      if (!isStatementTimeout(error) || batch === 1) throw error;
      // A grown batch that times out again cost a whole statement timeout: grow more rarely.
      if (grown) growAfter = Math.min(MAX_GROW_AFTER, growAfter * 2);
      grown = false;
      batch = Math.max(1, Math.floor(batch / 10));
      passed = 0;
      continue;
    }
    purged += counts.gone;
    if (counts.read < batch) return purged;
    passed += 1;
    if (batch < fullBatch && passed >= growAfter) {
      batch = Math.min(fullBatch, batch * 10);
      passed = 0;
      grown = true;
    }
  }
}
